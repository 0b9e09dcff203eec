package akgcfg

// QuantType is converter_lite's [common_quant_param] quant_type.
type QuantType int

const (
	QuantNone    QuantType = iota // no quantization asked for
	WeightQuant                   // WEIGHT_QUANT: weights int-N, activations float
	FullQuant                     // FULL_QUANT: calibrated int8 weights and activations
	DynamicQuant                  // DYNAMIC_QUANT: int8 weights, activations quantized at run time
)

func (t QuantType) String() string {
	switch t {
	case WeightQuant:
		return "WEIGHT_QUANT"
	case FullQuant:
		return "FULL_QUANT"
	case DynamicQuant:
		return "DYNAMIC_QUANT"
	}
	return "NONE"
}

// ActivationQuantMethod is [full_quant_param] activation_quant_method.
type ActivationQuantMethod int

const (
	MaxMin         ActivationQuantMethod = iota // MAX_MIN (converter_lite's default)
	KL                                          // KL: histogram, KL-divergence threshold
	RemovalOutlier                              // REMOVAL_OUTLIER: percentile clipping
)

func (m ActivationQuantMethod) String() string {
	switch m {
	case KL:
		return "KL"
	case RemovalOutlier:
		return "REMOVAL_OUTLIER"
	}
	return "MAX_MIN"
}

// QuantConfig is converter_lite's post-training quantization request: the
// sections [common_quant_param], [data_preprocess_param], [full_quant_param],
// [weight_quant_param], [mixed_bit_weight_quant_param] and
// [dynamic_quant_param], with converter_lite's defaults
// (tools/converter/config_parser/quant_param_parser.cc).
type QuantConfig struct {
	Type                  QuantType
	BitNum                int      // bit_num: 8 (1..16 for WEIGHT_QUANT)
	MinQuantWeightSize    int      // min_quant_weight_size: weights with fewer elements stay float
	MinQuantWeightChannel int      // min_quant_weight_channel: weights with fewer output channels stay float
	SkipQuantNodes        []string // skip_quant_node: node names kept in float
	DebugInfoSavePath     string   // debug_info_save_path: per-layer table folder, "" none
	EnableEncode          bool     // enable_encode

	// [data_preprocess_param]
	CalibratePath map[string]string // calibrate_path: graph input name -> folder of calibration files
	CalibrateSize int               // calibrate_size: files used per input
	InputType     string            // input_type: BIN or IMAGE
	Image         ImagePreprocess   // input_type=IMAGE's preprocessing

	// [full_quant_param]
	ActivationMethod ActivationQuantMethod
	BiasCorrection   bool   // bias_correction
	PerChannel       bool   // per_channel (weights)
	TargetDevice     string // target_device: "" (CPU), KIRIN, NVGPU, DSP, ASCEND

	// [weight_quant_param] / [dynamic_quant_param]
	DequantStrategy string // dequant_strategy
	QuantStrategy   string // quant_strategy

	// Source names each key's origin ("file:line") for error messages.
	Source map[string]string
}

// ImagePreprocess is [data_preprocess_param]'s image preprocessing for
// input_type=IMAGE, applied in converter_lite's order: decode, convert to
// ToFormat, resize, center crop, normalize ((x - mean) / std per channel).
type ImagePreprocess struct {
	ToFormat                  string    // image_to_format: RGB, BGR (default: as decoded, BGR like OpenCV), GRAY
	Mean, Std                 []float64 // normalize_mean, normalize_std: one per channel, or empty
	ResizeWidth, ResizeHeight int       // 0: no resize
	ResizeMethod              string    // NEAREST, LINEAR (default), CUBIC
	CropWidth, CropHeight     int       // center_crop_width/height, 0: none
}
