package akgcfg

import (
	"slices"
	"strings"
	"testing"
)

// TestQuantConfigDefaults: converter_lite's defaults (bit_num 8,
// min_quant_weight_size 0, min_quant_weight_channel 16, per_channel and
// bias_correction true, MAX_MIN) and the keys as read.
func TestQuantConfigDefaults(t *testing.T) {
	c := parseCfg(t, "[common_quant_param]\nquant_type=WEIGHT_QUANT\n")
	q := c.Quant
	if q == nil || q.Type != WeightQuant || q.BitNum != 8 || q.MinQuantWeightSize != 0 || q.MinQuantWeightChannel != 16 ||
		!q.PerChannel || !q.BiasCorrection || q.ActivationMethod != MaxMin || len(c.Warnings) != 0 {
		t.Fatalf("defaults %+v, warnings %v", q, c.Warnings)
	}
	c = parseCfg(t, "[common_quant_param]\nquant_type=FULL_QUANT\nbit_num=8\nmin_quant_weight_size=100\nmin_quant_weight_channel=4\n"+
		"skip_quant_node=conv1, fc ,conv1\n[data_preprocess_param]\ncalibrate_path=input:0:/data/calib,mask:'/data/m'\ncalibrate_size=16\ninput_type=BIN\n"+
		"[full_quant_param]\nactivation_quant_method=KL\nbias_correction=false\nper_channel=False\n")
	q = c.Quant
	if q == nil || q.Type != FullQuant || q.MinQuantWeightSize != 100 || q.MinQuantWeightChannel != 4 ||
		!slices.Equal(q.SkipQuantNodes, []string{"conv1", "fc"}) || q.CalibrateSize != 16 ||
		q.CalibratePath["input:0"] != "/data/calib" || q.CalibratePath["mask"] != "/data/m" ||
		q.ActivationMethod != KL || q.BiasCorrection || q.PerChannel || len(c.Warnings) != 0 {
		t.Fatalf("full quant %+v, warnings %v", q, c.Warnings)
	}
	if q.Source["activation_quant_method"] == "" || !strings.HasSuffix(q.Source["calibrate_size"], ":9") {
		t.Errorf("sources %v", q.Source)
	}
	c = parseCfg(t, "[common_quant_param]\nquant_type=FULL_QUANT\n[data_preprocess_param]\ncalibrate_path=x:d\ncalibrate_size=2\ninput_type=IMAGE\n"+
		"image_to_format=RGB\nnormalize_mean=[127.5, 127.5, 127.5]\nnormalize_std=[127.5,127.5,127.5]\nresize_width=256\nresize_height=256\nresize_method=LINEAR\ncenter_crop_width=224\ncenter_crop_height=224\n")
	if im := c.Quant.Image; c.Quant.InputType != "IMAGE" || im.ToFormat != "RGB" || len(im.Mean) != 3 || im.Std[2] != 127.5 ||
		im.ResizeWidth != 256 || im.CropHeight != 224 || im.ResizeMethod != "LINEAR" || len(c.Warnings) != 0 {
		t.Fatalf("image %+v %v", c.Quant.Image, c.Warnings)
	}
	c = parseCfg(t, "[common_quant_param]\nquant_type=DYNAMIC_QUANT\n[dynamic_quant_param]\nquant_strategy=ALWC\n")
	if c.Quant == nil || c.Quant.Type != DynamicQuant || c.Quant.QuantStrategy != "ALWC" {
		t.Fatalf("dynamic %+v", c.Quant)
	}
}

// TestQuantConfigErrors: converter_lite's range checks, and every key that
// asks for something not implemented here is an error naming file, line and
// key, never a float model reported as converted.
func TestQuantConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  string
		line int
		want string
	}{
		{"[common_quant_param]\nquant_type=INT8\n", 2, "must be WEIGHT_QUANT|FULL_QUANT|DYNAMIC_QUANT"},
		{"[common_quant_param]\nquant_type=FULL_QUANT\nbit_num=4\n[data_preprocess_param]\ncalibrate_path=x:d\ncalibrate_size=1\n", 3, "should be 8"},
		{"[common_quant_param]\nquant_type=WEIGHT_QUANT\nbit_num=17\n", 3, "[0,16]"},
		{"[common_quant_param]\nquant_type=WEIGHT_QUANT\nbit_num=0\n", 3, "mixed-bit"},
		{"[common_quant_param]\nquant_type=WEIGHT_QUANT\nbit_num=4\nenable_encode=false\n", 4, "enable_encode should be true"},
		{"[common_quant_param]\nquant_type=WEIGHT_QUANT\nmin_quant_weight_size=70000\n", 3, "[0,65535]"},
		{"[common_quant_param]\nquant_type=WEIGHT_QUANT\nmin_quant_weight_channel=x\n", 3, "valid number"},
		{"[common_quant_param]\nquant_type=FULL_QUANT\n", 0, "needs calibration data"},
		{"[common_quant_param]\nquant_type=FULL_QUANT\n[data_preprocess_param]\ncalibrate_path=x:d\ncalibrate_size=0\n", 5, "[1,65535]"},
		{"[common_quant_param]\nquant_type=FULL_QUANT\n[data_preprocess_param]\ncalibrate_path=nodir\ncalibrate_size=2\n", 4, "input_name:folder"},
		{"[common_quant_param]\nquant_type=FULL_QUANT\n[data_preprocess_param]\ncalibrate_path=x:d\ncalibrate_size=2\ninput_type=IMAGE\nresize_method=AREA\n", 7, "NEAREST|LINEAR|CUBIC"},
		{"[common_quant_param]\nquant_type=FULL_QUANT\n[data_preprocess_param]\ncalibrate_path=x:d\ncalibrate_size=2\ninput_type=IMAGE\nnormalize_std=[1,0,1]\n", 7, "standard deviation of 0"},
		{"[common_quant_param]\nquant_type=FULL_QUANT\n[data_preprocess_param]\ncalibrate_path=x:d\ncalibrate_size=2\ninput_type=IMAGE\nresize_width=224\n", 7, "go together"},
		{"[common_quant_param]\nquant_type=FULL_QUANT\n[data_preprocess_param]\ncalibrate_path=x:d\ncalibrate_size=2\n[full_quant_param]\nactivation_quant_method=MSE\n", 7, "MAX_MIN|KL|REMOVAL_OUTLIER"},
		{"[common_quant_param]\nquant_type=FULL_QUANT\n[data_preprocess_param]\ncalibrate_path=x:d\ncalibrate_size=2\n[full_quant_param]\ntarget_device=ASCEND\n", 7, "not implemented"},
		{"[common_quant_param]\nquant_type=FULL_QUANT\n[data_preprocess_param]\ncalibrate_path=x:d\ncalibrate_size=2\n[full_quant_param]\nbias_correction=yes\n", 7, "true or false"},
		{"[common_quant_param]\nquant_type=WEIGHT_QUANT\n[weight_quant_param]\nquant_strategy=GPTQ\n", 4, "not implemented"},
		{"[common_quant_param]\nquant_type=WEIGHT_QUANT\n[mixed_bit_weight_quant_param]\ninit_scale=0.02\n", 4, "mixed-bit"},
		{"[common_quant_param]\nquant_type=DYNAMIC_QUANT\n[dynamic_quant_param]\nquant_strategy=ACWL\n", 4, "not implemented"},
		{"[common_quant_param]\nquant_type=WEIGHT_QUANT\n[transform_quant_param]\nexport_precision_mode=QUANT\n", 4, "not implemented"},
	} {
		errs := cfgErrors(t, tc.cfg)
		if len(errs) == 0 || errs[0].Line != tc.line || !strings.Contains(errs[0].Msg, tc.want) {
			t.Errorf("%q: errors %+v, want line %d with %q", tc.cfg, errs, tc.line, tc.want)
		}
	}
}

// TestQuantConfigWarnings: sections without quant_type, unknown keys and
// sections the chosen quant_type does not read are warned about.
func TestQuantConfigWarnings(t *testing.T) {
	c := parseCfg(t, "[data_preprocess_param]\ncalibrate_size=16\n[micro_param]\nenable_micro=true\n")
	if c.Quant != nil || len(c.Warnings) != 2 || !strings.Contains(c.Warnings[0].Message+c.Warnings[1].Message, "not quantized") {
		t.Fatalf("quant %+v warnings %+v", c.Quant, c.Warnings)
	}
	c = parseCfg(t, "[common_quant_param]\nquant_type=WEIGHT_QUANT\nbitnum=4\n[full_quant_param]\nper_channel=true\n")
	var msgs []string
	for _, w := range c.Warnings {
		msgs = append(msgs, w.Message)
	}
	all := strings.Join(msgs, "\n")
	if c.Quant == nil || !strings.Contains(all, `unknown key "bitnum"`) || !strings.Contains(all, "[full_quant_param] is not read for quant_type=WEIGHT_QUANT") {
		t.Fatalf("warnings %s", all)
	}
	c = parseCfg(t, "[common_quant_param]\nquant_type=WEIGHT_QUANT\nbit_num=4\n")
	if c.Quant == nil || c.Quant.BitNum != 4 || len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0].Message, "bit-packing") {
		t.Fatalf("bit_num=4 %+v %v", c.Quant, c.Warnings)
	}
}
