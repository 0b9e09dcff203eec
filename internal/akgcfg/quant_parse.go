package akgcfg

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The quantization sections, as converter_lite reads them
// (tools/converter/config_parser/quant_param_parser.cc, preprocess_parser.cc
// and config_file_parser.cc): every key converter_lite knows is either
// implemented here or an error that says the model would not be quantized
// as asked; a key converter_lite does not know is warned about, as the rest
// of this file's keys.
const (
	commonQuantSection     = "common_quant_param"
	preprocessSection      = "data_preprocess_param"
	fullQuantSection       = "full_quant_param"
	weightQuantSection     = "weight_quant_param"
	mixedBitQuantSection   = "mixed_bit_weight_quant_param"
	dynamicQuantSection    = "dynamic_quant_param"
	transformQuantSection  = "transform_quant_param"
	quantSizeLimit         = 65535 // converter_lite's kMaxSize
	defaultMinQuantChannel = 16    // converter_lite's CommonQuantParam default
)

// quantKeys are the keys converter_lite reads in each quantization section.
var quantKeys = map[string][]string{
	commonQuantSection: {"quant_type", "bit_num", "min_quant_weight_size", "min_quant_weight_channel",
		"skip_quant_node", "debug_info_save_path", "enable_encode", "workspace"},
	preprocessSection: {"calibrate_path", "calibrate_size", "input_type", "image_to_format", "normalize_mean",
		"normalize_std", "resize_width", "resize_height", "resize_method", "center_crop_width", "center_crop_height"},
	fullQuantSection:      {"activation_quant_method", "bias_correction", "target_device", "per_channel", "smooth_alpha", "enable_smooth_shift"},
	weightQuantSection:    {"dequant_strategy", "update_mindir", "max_segments", "per_channel", "bias_correction", "quant_strategy"},
	mixedBitQuantSection:  {"init_scale", "auto_tune", "use_cv_data", "max_iterations"},
	dynamicQuantSection:   {"quant_strategy"},
	transformQuantSection: {"export_precision_mode"},
}

// quantParser reads the quantization sections of one config file.
type quantParser struct {
	file  string
	secs  map[string]map[string]string
	lines map[[2]string]int // (section, key) -> line of its first occurrence
	warns []Warning
	errs  []error
	q     *QuantConfig
}

func (p *quantParser) val(sec, key string) (string, bool) {
	v, ok := p.secs[sec][key]
	return strings.TrimSpace(v), ok && strings.TrimSpace(v) != ""
}

func (p *quantParser) origin(sec, key string) string {
	if l := p.lines[[2]string{sec, key}]; l > 0 {
		return fmt.Sprintf("%s:%d", p.file, l)
	}
	return p.file
}

func (p *quantParser) fail(sec, key, format string, args ...any) {
	p.errs = append(p.errs, &Error{File: p.file, Line: p.lines[[2]string{sec, key}],
		Msg: fmt.Sprintf("[%s] %s: ", sec, key) + fmt.Sprintf(format, args...)})
}

func (p *quantParser) warn(sec, key, format string, args ...any) {
	p.warns = append(p.warns, Warning{File: p.file, Line: p.lines[[2]string{sec, key}], Key: key,
		Message: fmt.Sprintf("[%s] ", sec) + fmt.Sprintf(format, args...)})
}

// notImplemented: a key whose value asks for something this converter does
// not do; converting anyway would not give the model asked for.
func (p *quantParser) notImplemented(sec, key, what string) {
	p.fail(sec, key, "%s is not implemented by this converter; the model would not be quantized as asked "+
		"(docs/quantization.md lists what is)", what)
}

// floats reads a list of numbers, "[a, b, c]" or "a,b,c".
func (p *quantParser) floats(sec, key string) []float64 {
	v, ok := p.val(sec, key)
	if !ok {
		return nil
	}
	var out []float64
	for _, f := range strings.Split(strings.Trim(v, "[] "), ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			p.fail(sec, key, "%q should be a list of numbers", v)
			return nil
		}
		out = append(out, x)
	}
	p.q.Source[key] = p.origin(sec, key)
	return out
}

// choice reads an enumerated key: its value when it is one of done, ""
// when absent, or an error (not implemented for a value of later, else not
// one of converter_lite's values, listed as converter_lite lists them).
func (p *quantParser) choice(sec, key string, all []string, done []string, later map[string]string) string {
	v, ok := p.val(sec, key)
	switch {
	case !ok:
		return ""
	case slices.Contains(done, v):
		p.q.Source[key] = p.origin(sec, key)
		return v
	case later[v] != "":
		p.notImplemented(sec, key, key+"="+v+" ("+later[v]+")")
	default:
		p.fail(sec, key, "%q: %s must be %s", v, key, strings.Join(all, "|"))
	}
	return ""
}

func (p *quantParser) intIn(sec, key string, lo, hi int, dst *int) {
	v, ok := p.val(sec, key)
	if !ok {
		return
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		p.fail(sec, key, "%q should be a valid number", v)
		return
	}
	if n < lo || n > hi {
		p.fail(sec, key, "%d should be in [%d,%d]", n, lo, hi)
		return
	}
	*dst = n
	p.q.Source[key] = p.origin(sec, key)
}

func (p *quantParser) boolean(sec, key string, dst *bool) bool {
	v, ok := p.val(sec, key)
	if !ok {
		return false
	}
	switch v { // converter_lite's ConvertBool: exactly these spellings
	case "true", "True", "TRUE":
		*dst = true
	case "false", "False", "FALSE":
		*dst = false
	default:
		p.fail(sec, key, "%q should be true or false", v)
		return false
	}
	p.q.Source[key] = p.origin(sec, key)
	return true
}

// parseQuant builds the QuantConfig of the file's quantization sections; nil
// when [common_quant_param] asks for none.
func parseQuant(file string, secs map[string]map[string]string, lines map[[2]string]int) (*QuantConfig, []Warning, []error) {
	p := &quantParser{file: file, secs: secs, lines: lines}
	p.q = &QuantConfig{BitNum: 8, MinQuantWeightChannel: defaultMinQuantChannel, EnableEncode: true,
		InputType: "BIN", BiasCorrection: true, PerChannel: true, Source: map[string]string{}}
	for _, sec := range []string{commonQuantSection, preprocessSection, fullQuantSection, weightQuantSection,
		mixedBitQuantSection, dynamicQuantSection, transformQuantSection} {
		keys := make([]string, 0, len(secs[sec]))
		for k := range secs[sec] {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if !slices.Contains(quantKeys[sec], k) {
				p.warn(sec, k, "unknown key %q (converter_lite reads %s), ignored", k, strings.Join(quantKeys[sec], ", "))
			}
		}
	}

	qt, ok := p.val(commonQuantSection, "quant_type")
	if !ok {
		for _, sec := range []string{preprocessSection, fullQuantSection, weightQuantSection, mixedBitQuantSection,
			dynamicQuantSection, transformQuantSection} {
			if len(secs[sec]) > 0 {
				p.warns = append(p.warns, Warning{File: file, Message: fmt.Sprintf(
					"[%s] has no effect without [%s] quant_type (as in converter_lite); the model is not quantized", sec, commonQuantSection)})
			}
		}
		for _, k := range []string{"bit_num", "min_quant_weight_size", "min_quant_weight_channel", "skip_quant_node"} {
			if _, set := p.val(commonQuantSection, k); set {
				p.warn(commonQuantSection, k, "%s has no effect without quant_type; the model is not quantized", k)
			}
		}
		return nil, p.warns, p.errs
	}
	switch qt {
	case "WEIGHT_QUANT":
		p.q.Type = WeightQuant
	case "FULL_QUANT":
		p.q.Type = FullQuant
	case "DYNAMIC_QUANT":
		p.q.Type = DynamicQuant
	default:
		p.fail(commonQuantSection, "quant_type", "%q: quant_type must be WEIGHT_QUANT|FULL_QUANT|DYNAMIC_QUANT", qt)
		return nil, p.warns, p.errs
	}
	p.q.Source["quant_type"] = p.origin(commonQuantSection, "quant_type")
	p.common()
	switch p.q.Type {
	case WeightQuant:
		p.weight()
	case FullQuant:
		p.preprocess(true)
		p.full()
	case DynamicQuant:
		p.dynamic()
	}
	// Sections the chosen quant_type does not read are dropped by
	// converter_lite too; say so rather than let a user think they applied.
	readBy := map[QuantType][]string{
		WeightQuant:  {commonQuantSection, weightQuantSection, mixedBitQuantSection},
		FullQuant:    {commonQuantSection, preprocessSection, fullQuantSection},
		DynamicQuant: {commonQuantSection, dynamicQuantSection},
	}
	for _, sec := range []string{preprocessSection, fullQuantSection, weightQuantSection, mixedBitQuantSection, dynamicQuantSection} {
		if len(secs[sec]) > 0 && !slices.Contains(readBy[p.q.Type], sec) {
			p.warns = append(p.warns, Warning{File: file, Message: fmt.Sprintf(
				"[%s] is not read for quant_type=%s; its keys are ignored", sec, p.q.Type)})
		}
	}
	if len(secs[transformQuantSection]) > 0 {
		p.notImplemented(transformQuantSection, "export_precision_mode", "[transform_quant_param] (Ascend quantized-model transform)")
	}
	if len(p.errs) > 0 {
		return nil, p.warns, p.errs
	}
	return p.q, p.warns, nil
}

func (p *quantParser) common() {
	const sec = commonQuantSection
	q := p.q
	if v, ok := p.val(sec, "bit_num"); ok {
		n, err := strconv.Atoi(v)
		switch {
		case err != nil:
			p.fail(sec, "bit_num", "%q should be a valid number", v)
		case q.Type == WeightQuant && (n < 0 || n > 16):
			p.fail(sec, "bit_num", "%d should be in [0,16] for WEIGHT_QUANT", n)
		case q.Type != WeightQuant && n != 8:
			p.fail(sec, "bit_num", "%d: bit_num should be 8 for %s", n, q.Type)
		case n == 0:
			// converter_lite's bit_num=0 is mixed-bit weight quantization.
			p.notImplemented(sec, "bit_num", "bit_num=0 (mixed-bit weight quantization)")
		default:
			q.BitNum = n
			q.Source["bit_num"] = p.origin(sec, "bit_num")
		}
	}
	if p.boolean(sec, "enable_encode", &q.EnableEncode) && q.Type == WeightQuant && q.BitNum != 8 && q.BitNum != 16 && !q.EnableEncode {
		p.fail(sec, "enable_encode", "enable_encode should be true when bit_num is in [1,7] or [9,15]")
	}
	if q.Type == WeightQuant && q.BitNum != 8 && q.BitNum != 16 {
		p.warn(sec, "bit_num", "bit_num=%d: weights are rounded to %d-bit values but stored in %d-bit integers "+
			"(converter_lite's bit-packing encoding is not implemented), so the file is no smaller than with bit_num=%d",
			q.BitNum, q.BitNum, containerBits(q.BitNum), containerBits(q.BitNum))
	}
	p.intIn(sec, "min_quant_weight_size", 0, quantSizeLimit, &q.MinQuantWeightSize)
	p.intIn(sec, "min_quant_weight_channel", 0, quantSizeLimit, &q.MinQuantWeightChannel)
	if v, ok := p.val(sec, "skip_quant_node"); ok {
		for _, n := range strings.Split(v, ",") {
			if n = strings.TrimSpace(n); n != "" && !slices.Contains(q.SkipQuantNodes, n) {
				q.SkipQuantNodes = append(q.SkipQuantNodes, n)
			}
		}
		q.Source["skip_quant_node"] = p.origin(sec, "skip_quant_node")
	}
	if v, ok := p.val(sec, "debug_info_save_path"); ok {
		q.DebugInfoSavePath = v
		q.Source["debug_info_save_path"] = p.origin(sec, "debug_info_save_path")
	}
	if _, ok := p.val(sec, "workspace"); ok {
		p.warn(sec, "workspace", "workspace (converter_lite's scratch folder for models over 2 GB) is not needed here: weights are streamed; ignored")
	}
}

// containerBits is the integer width a bit_num value is stored in.
func containerBits(bits int) int {
	if bits <= 8 {
		return 8
	}
	return 16
}

func (p *quantParser) weight() {
	const sec = weightQuantSection
	q := p.q
	if v, ok := p.val(sec, "dequant_strategy"); ok {
		if v != "ON_THE_FLY" {
			p.fail(sec, "dequant_strategy", "%q: dequant_strategy must be ON_THE_FLY", v)
		} else {
			// converter_lite's ON_THE_FLY asks the Ascend backend to
			// dequantize inside the kernel; here the CPU runtime dequantizes
			// once at load, which gives the same numbers.
			q.DequantStrategy = v
			p.warn(sec, "dequant_strategy", "dequant_strategy=ON_THE_FLY: the weights are dequantized once when the model is loaded (same values)")
		}
	}
	q.QuantStrategy = p.choice(sec, "quant_strategy", []string{"GPTQ", "MAX_MIN"}, []string{"MAX_MIN"},
		map[string]string{"GPTQ": "GPTQ weight rounding"})
	p.boolean(sec, "per_channel", &q.PerChannel)
	corr := false
	if p.boolean(sec, "bias_correction", &corr) && corr {
		p.notImplemented(sec, "bias_correction", "bias_correction=true for WEIGHT_QUANT")
	}
	upd := false
	if p.boolean(sec, "update_mindir", &upd) && upd {
		p.notImplemented(sec, "update_mindir", "update_mindir=true (rewriting the input MindIR in place)")
	}
	if _, ok := p.val(sec, "max_segments"); ok {
		p.notImplemented(sec, "max_segments", "max_segments (GPTQ/Ascend segmented weights)")
	}
	if len(p.secs[mixedBitQuantSection]) > 0 {
		for _, k := range sortedKeys(p.secs[mixedBitQuantSection]) {
			p.notImplemented(mixedBitQuantSection, k, "mixed-bit weight quantization")
			break
		}
	}
}

func (p *quantParser) full() {
	const sec = fullQuantSection
	q := p.q
	switch p.choice(sec, "activation_quant_method", []string{"MAX_MIN", "KL", "REMOVAL_OUTLIER"}, []string{"MAX_MIN", "KL", "REMOVAL_OUTLIER"}, nil) {
	case "KL":
		q.ActivationMethod = KL
	case "REMOVAL_OUTLIER":
		q.ActivationMethod = RemovalOutlier
	}
	p.boolean(sec, "bias_correction", &q.BiasCorrection)
	p.boolean(sec, "per_channel", &q.PerChannel)
	devices := []string{"KIRIN", "NVGPU", "DSP", "ASCEND"}
	later := map[string]string{}
	for _, d := range devices {
		later[d] = "this converter's int8 kernels are CPU ones; leave target_device out"
	}
	p.choice(sec, "target_device", devices, nil, later)
	smooth := false
	if p.boolean(sec, "enable_smooth_shift", &smooth) && smooth {
		p.notImplemented(sec, "enable_smooth_shift", "enable_smooth_shift=true (SmoothQuant)")
	}
	if v, ok := p.val(sec, "smooth_alpha"); ok {
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			p.fail(sec, "smooth_alpha", "%q should be a valid number", v)
		} else if !smooth {
			p.warn(sec, "smooth_alpha", "smooth_alpha has no effect without enable_smooth_shift=true; ignored")
		}
	}
}

// preprocess reads [data_preprocess_param]; FULL_QUANT needs calibration
// data (converter_lite fails without it too).
func (p *quantParser) preprocess(required bool) {
	const sec = preprocessSection
	q := p.q
	if v := p.choice(sec, "input_type", []string{"IMAGE", "BIN"}, []string{"BIN", "IMAGE"}, nil); v != "" {
		q.InputType = v
	}
	img := &q.Image
	img.ToFormat = p.choice(sec, "image_to_format", []string{"RGB", "GRAY", "BGR"}, []string{"RGB", "GRAY", "BGR"}, nil)
	img.ResizeMethod = p.choice(sec, "resize_method", []string{"NEAREST", "LINEAR", "CUBIC"}, []string{"NEAREST", "LINEAR", "CUBIC"}, nil)
	p.intIn(sec, "resize_width", 1, quantSizeLimit, &img.ResizeWidth)
	p.intIn(sec, "resize_height", 1, quantSizeLimit, &img.ResizeHeight)
	p.intIn(sec, "center_crop_width", 1, quantSizeLimit, &img.CropWidth)
	p.intIn(sec, "center_crop_height", 1, quantSizeLimit, &img.CropHeight)
	img.Mean = p.floats(sec, "normalize_mean")
	img.Std = p.floats(sec, "normalize_std")
	for _, s := range img.Std {
		if s == 0 {
			p.fail(sec, "normalize_std", "a standard deviation of 0")
		}
	}
	if (img.ResizeWidth == 0) != (img.ResizeHeight == 0) {
		p.fail(sec, "resize_width", "resize_width and resize_height go together")
	}
	if (img.CropWidth == 0) != (img.CropHeight == 0) {
		p.fail(sec, "center_crop_width", "center_crop_width and center_crop_height go together")
	}
	if q.InputType != "IMAGE" {
		for _, k := range []string{"image_to_format", "normalize_mean", "normalize_std", "resize_width", "resize_height",
			"resize_method", "center_crop_width", "center_crop_height"} {
			if _, ok := p.val(sec, k); ok {
				p.warn(sec, k, "%s applies to input_type=IMAGE only; ignored for %s", k, q.InputType)
			}
		}
	}
	if v, ok := p.val(sec, "calibrate_path"); ok {
		q.CalibratePath = map[string]string{}
		for _, kv := range strings.Split(v, ",") {
			kv = strings.TrimSpace(kv)
			if kv == "" {
				continue
			}
			// converter_lite: the input name is everything before the last
			// ':' (names may contain ':'), the folder what follows.
			i := strings.LastIndex(kv, ":")
			if i <= 0 || i == len(kv)-1 {
				p.fail(sec, "calibrate_path", "%q should be input_name:folder", kv)
				continue
			}
			name, dir := kv[:i], strings.Trim(kv[i+1:], "'")
			if _, dup := q.CalibratePath[name]; dup {
				p.fail(sec, "calibrate_path", "input %q is given twice", name)
			}
			q.CalibratePath[name] = dir
		}
		q.Source["calibrate_path"] = p.origin(sec, "calibrate_path")
	}
	p.intIn(sec, "calibrate_size", 1, quantSizeLimit, &q.CalibrateSize)
	if required {
		if len(q.CalibratePath) == 0 {
			p.fail(sec, "calibrate_path", "%s needs calibration data: [%s] calibrate_path=input_name:folder,...", q.Type, sec)
		}
		if q.CalibrateSize == 0 {
			p.fail(sec, "calibrate_size", "%s needs [%s] calibrate_size in [1,%d]", q.Type, sec, quantSizeLimit)
		}
	}
}

func (p *quantParser) dynamic() {
	const sec = dynamicQuantSection
	q := p.q
	q.QuantStrategy = "ALWC"
	p.choice(sec, "quant_strategy", []string{"ALWC", "ACWL"}, []string{"ALWC"},
		map[string]string{"ACWL": "per-channel activations, per-layer weights"})
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
