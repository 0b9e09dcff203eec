// Package akgcfg holds the graph-kernel configuration of the converter: the
// MindSpore graph_kernel_flags (from a converter_lite-style INI config file's
// [graph_kernel_param] section, the MS_DEV_GRAPH_KERNEL_FLAGS environment
// variable, or a --path=flags.json file) merged into one typed Flags value,
// plus the other converter_lite config sections kept as plain maps.
//
// Parsing follows MindSpore's graph_kernel_flags.cc; the defaults follow its
// RegisterFlags as built for MindSpore Lite (opt_level defaults to 0, so a
// config must set it explicitly).
package akgcfg

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Flags is the full MindSpore graph-kernel flag set. The `gk` tag of each
// field is the exact MindSpore key. Values of keys that were not set
// explicitly are defaults; the ones that depend on the backend are only final
// after Resolve.
type Flags struct {
	// Integer flags.
	OptLevel                    int `gk:"opt_level"`
	FusionOpsLevel              int `gk:"fusion_ops_level"`
	ParallelOpsLevel            int `gk:"parallel_ops_level"`
	ReduceFuseDepth             int `gk:"reduce_fuse_depth"`
	OnlineTuning                int `gk:"online_tuning"`
	CPUReferThreadNum           int `gk:"cpu_refer_thread_num"`
	RecomputeIncrementThreshold int `gk:"recompute_increment_threshold"`
	RecomputePeakThreshold      int `gk:"recompute_peak_threshold"`
	CompositeOpLimitSize        int `gk:"composite_op_limit_size"`

	// Boolean flags.
	DumpAsText                    bool `gk:"dump_as_text"`
	EnableStitchFusion            bool `gk:"enable_stitch_fusion"`
	EnableRecomputeFusion         bool `gk:"enable_recompute_fusion"`
	EnableParallelFusion          bool `gk:"enable_parallel_fusion"`
	EnableHorizontalFusion        bool `gk:"enable_horizontal_fusion"`
	EnableAutoTensorInplace       bool `gk:"enable_auto_tensor_inplace"`
	EnableDynamicBatch            bool `gk:"enable_dynamic_batch"`
	EnableLowPrecision            bool `gk:"enable_low_precision"`
	EnableCSRFusion               bool `gk:"enable_csr_fusion"`
	EnableDebugMode               bool `gk:"enable_debug_mode"`
	EnableLiteConvTuning          bool `gk:"enable_lite_conv_tuning"`
	EnableVectorization           bool `gk:"enable_vectorization"`
	EnableDynamicShapeFusion      bool `gk:"enable_dynamic_shape_fusion"`
	EnableParallelOpCombine       bool `gk:"enable_parallel_op_combine"`
	DisableMatmulPostFusion       bool `gk:"disable_matmul_post_fusion"`
	EnableAllreducePrologueFusion bool `gk:"enable_allreduce_prologue_fusion"`
	EnableAllreduceEpilogueFusion bool `gk:"enable_allreduce_epilogue_fusion"`
	ExactPrecisionMode            bool `gk:"exact_precision_mode"`
	EnableCCELib                  bool `gk:"enable_cce_lib"`

	// String flags.
	RepositoryPath  string `gk:"repository_path"`
	TargetOS        string `gk:"target_os"`
	CPUArch         string `gk:"cpu_arch"`
	CPUFeature      string `gk:"cpu_feature"`
	CPUType         string `gk:"cpu_type"`
	KernelGenerator string `gk:"kernel_generator"`

	// String-list flags.
	EnableExpandOps         []string `gk:"enable_expand_ops"`
	EnableExpandOpsOnly     []string `gk:"enable_expand_ops_only"`
	DisableExpandOps        []string `gk:"disable_expand_ops"`
	EnableClusterOps        []string `gk:"enable_cluster_ops"`
	EnableClusterOpsOnly    []string `gk:"enable_cluster_ops_only"`
	DisableClusterOps       []string `gk:"disable_cluster_ops"`
	EnableSimplifyExprsOnly []string `gk:"enable_simplify_exprs_only"`
	DisableSimplifyExprs    []string `gk:"disable_simplify_exprs"`
	EnablePass              []string `gk:"enable_pass"`
	DisablePass             []string `gk:"disable_pass"`
	EnableCCELibOps         []string `gk:"enable_cce_lib_ops"`
	EnableCCELibOpsOnly     []string `gk:"enable_cce_lib_ops_only"`
	DisableCCELibOps        []string `gk:"disable_cce_lib_ops"`
	EnablePacketOpsOnly     []string `gk:"enable_packet_ops_only"`
	DisablePacketOps        []string `gk:"disable_packet_ops"`
	EnableFusionPatternOnly []string `gk:"enable_fusion_pattern_only"`
	DisableFusionPattern    []string `gk:"disable_fusion_pattern"`

	// explicit holds every key set by the user, with its value in canonical
	// text and where it came from. Resolve rebuilds the fields from it, so
	// Resolve can be called again for another backend.
	explicit map[string]setting
}

type setting struct {
	canon  string
	origin Origin
}

// Origin says where a flag value came from.
type Origin struct {
	File string `json:"file,omitempty"` // config file, JSON file, or EnvVar
	Line int    `json:"line,omitempty"` // 1-based; 0 when unknown or not line-based
}

func (o Origin) String() string {
	switch {
	case o.File == "":
		return "<api>"
	case o.Line > 0:
		return o.File + ":" + strconv.Itoa(o.Line)
	default:
		return o.File
	}
}

type flagKind uint8

const (
	kindInt flagKind = iota
	kindBool
	kindString
	kindList
)

type flagDesc struct {
	name  string
	kind  flagKind
	field int
}

var (
	flagTable []flagDesc     // in struct order
	flagIndex map[string]int // key -> index into flagTable
	flagNames []string       // sorted keys
)

func init() {
	t := reflect.TypeFor[Flags]()
	flagIndex = make(map[string]int)
	for i := range t.NumField() {
		sf := t.Field(i)
		name := sf.Tag.Get("gk")
		if name == "" {
			continue
		}
		var k flagKind
		switch sf.Type.Kind() {
		case reflect.Int:
			k = kindInt
		case reflect.Bool:
			k = kindBool
		case reflect.String:
			k = kindString
		case reflect.Slice:
			k = kindList
		default:
			panic("akgcfg: unsupported flag field type " + sf.Type.String())
		}
		flagIndex[name] = len(flagTable)
		flagTable = append(flagTable, flagDesc{name: name, kind: k, field: i})
		flagNames = append(flagNames, name)
	}
	slices.Sort(flagNames)
}

// Keys returns every known graph-kernel flag key, sorted.
func Keys() []string { return slices.Clone(flagNames) }

// NewFlags returns the flag set with its static defaults (converter_lite:
// opt_level 0). Backend-dependent values assume a non-Ascend backend until
// Resolve is called.
func NewFlags() *Flags {
	f := &Flags{}
	f.setStaticDefaults()
	f.deriveDefaults(Backend{Device: CPU})
	return f
}

func (f *Flags) setStaticDefaults() {
	explicit := f.explicit
	*f = Flags{
		OptLevel:                      0,
		FusionOpsLevel:                1,
		ReduceFuseDepth:               -1,
		CPUReferThreadNum:             8,
		CompositeOpLimitSize:          200,
		EnableVectorization:           true,
		EnableAllreducePrologueFusion: true,
		EnableAllreduceEpilogueFusion: true,
		ExactPrecisionMode:            true,
		TargetOS:                      "linux",
		KernelGenerator:               "AKG",
	}
	f.explicit = explicit
}

// IsSet reports whether key was given explicitly.
func (f *Flags) IsSet(key string) bool { _, ok := f.explicit[key]; return ok }

// Origin tells where an explicitly set key came from.
func (f *Flags) Origin(key string) (Origin, bool) {
	s, ok := f.explicit[key]
	return s.origin, ok
}

// ExplicitKeys returns the explicitly set keys, sorted.
func (f *Flags) ExplicitKeys() []string {
	keys := make([]string, 0, len(f.explicit))
	for k := range f.explicit {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Tokens returns the canonical "--k=v" string of the explicitly set keys,
// sorted by key, e.g. "--enable_expand_ops=Gelu,Square --opt_level=2".
func (f *Flags) Tokens() string {
	var b strings.Builder
	for i, k := range f.ExplicitKeys() {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("--")
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(f.explicit[k].canon)
	}
	return b.String()
}

// Set parses value for key as if it came from a flags string and marks the
// key explicit (a later Set of the same key replaces the value).
func (f *Flags) Set(key, value string) error {
	_, err := f.set(key, value, Origin{})
	return err
}

// set validates and stores one explicit key. It returns a warning message
// (e.g. clamping) or an error message; the key must be known.
func (f *Flags) set(key, value string, org Origin) (warn string, err error) {
	idx, ok := flagIndex[key]
	if !ok {
		return "", &Error{File: org.File, Line: org.Line, Key: key, Msg: "unknown flag"}
	}
	canon, warn, msg := canonicalValue(flagTable[idx], value)
	if msg != "" {
		return "", &Error{File: org.File, Line: org.Line, Key: key, Msg: msg}
	}
	if f.explicit == nil {
		f.explicit = make(map[string]setting)
	}
	f.explicit[key] = setting{canon: canon, origin: org}
	f.store(flagTable[idx], canon)
	return warn, nil
}

// store writes a canonical value (which always parses) into the field.
func (f *Flags) store(d flagDesc, canon string) {
	v := reflect.ValueOf(f).Elem().Field(d.field)
	switch d.kind {
	case kindInt:
		n, _ := strconv.Atoi(canon)
		v.SetInt(int64(n))
	case kindBool:
		v.SetBool(canon == "true")
	case kindString:
		v.SetString(canon)
	case kindList:
		v.Set(reflect.ValueOf(strings.Split(canon, ",")))
	}
}

// Value returns the current value of key as text (lists comma-joined).
func (f *Flags) Value(key string) (string, bool) {
	idx, ok := flagIndex[key]
	if !ok {
		return "", false
	}
	v := reflect.ValueOf(f).Elem().Field(flagTable[idx].field)
	switch flagTable[idx].kind {
	case kindInt:
		return strconv.FormatInt(v.Int(), 10), true
	case kindBool:
		return strconv.FormatBool(v.Bool()), true
	case kindString:
		return v.String(), true
	default:
		return strings.Join(v.Interface().([]string), ","), true
	}
}

// Clone returns a deep copy.
func (f *Flags) Clone() *Flags {
	c := *f
	c.explicit = make(map[string]setting, len(f.explicit))
	for k, s := range f.explicit {
		c.explicit[k] = s
	}
	rv := reflect.ValueOf(&c).Elem()
	for _, d := range flagTable {
		if d.kind == kindList {
			fv := rv.Field(d.field)
			fv.Set(reflect.ValueOf(slices.Clone(fv.Interface().([]string))))
		}
	}
	return &c
}

// Resolve recomputes every value that depends on opt_level or on the
// backend, as MindSpore's RegisterFlags and converter_lite's
// GraphKernelOptimize do, keeping the explicit keys. It can be called again
// for another backend. The warnings say which explicit settings were
// overridden.
func (f *Flags) Resolve(b Backend) []Warning {
	f.setStaticDefaults()
	for _, k := range f.ExplicitKeys() {
		f.store(flagTable[flagIndex[k]], f.explicit[k].canon)
	}
	return f.deriveDefaults(b)
}

func (f *Flags) deriveDefaults(b Backend) []Warning {
	var warns []Warning
	warnKey := func(key, msg string) {
		o, _ := f.Origin(key)
		warns = append(warns, Warning{File: o.File, Line: o.Line, Key: key, Message: msg})
	}
	ascend := b.Device == Ascend
	if !f.IsSet("fusion_ops_level") {
		f.FusionOpsLevel = 1
		if ascend {
			f.FusionOpsLevel = 0
		}
	}
	if !f.IsSet("enable_stitch_fusion") {
		f.EnableStitchFusion = f.OptLevel == 3 && !b.Is910B()
	}
	if !f.IsSet("enable_recompute_fusion") {
		f.EnableRecomputeFusion = f.OptLevel >= 2
	}
	if !f.IsSet("enable_parallel_fusion") {
		f.EnableParallelFusion = f.OptLevel == 3
	}
	if f.ReduceFuseDepth == -1 { // -1 selects the built-in depth
		f.ReduceFuseDepth = 20
		if ascend {
			f.ReduceFuseDepth = 10
		}
	}
	// converter_lite appends --enable_dynamic_shape_fusion after the user's
	// flags on Ascend, so it is on unless the user set it.
	if ascend && !f.IsSet("enable_dynamic_shape_fusion") {
		f.EnableDynamicShapeFusion = true
	}
	if f.EnableDynamicShapeFusion && !ascend {
		if f.IsSet("kernel_generator") && f.KernelGenerator != "AKG_V2" {
			warnKey("kernel_generator", fmt.Sprintf("%q replaced by \"AKG_V2\": dynamic-shape fusion on %s needs it", f.KernelGenerator, b.Device))
		}
		f.KernelGenerator = "AKG_V2"
		return warns
	}
	if f.KernelGenerator == "DVM" && !f.IsSet("enable_dynamic_shape_fusion") {
		f.EnableDynamicShapeFusion = true
	}
	if ascend && f.EnableAutoTensorInplace {
		warnKey("enable_auto_tensor_inplace", "not supported on Ascend, turned off")
		f.EnableAutoTensorInplace = false
	}
	if ascend && f.EnableParallelFusion {
		warnKey("enable_parallel_fusion", "parallel fusion is experimental on Ascend")
	}
	return warns
}

// MarshalJSON writes every flag under its MindSpore key, in declaration
// order; empty lists are written as [].
func (f *Flags) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	rv := reflect.ValueOf(f).Elem()
	for i, d := range flagTable {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(d.name)
		b.Write(k)
		b.WriteByte(':')
		val := rv.Field(d.field).Interface()
		if l, ok := val.([]string); ok && l == nil {
			val = []string{}
		}
		v, err := json.Marshal(val)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

// View is a JSON-friendly summary of a flag set for reports.
type View struct {
	Tokens   string         `json:"tokens"`   // canonical --k=v of the explicit keys
	Explicit []ExplicitFlag `json:"explicit"` // explicit keys, sorted
	Values   *Flags         `json:"values"`   // every flag's current value
}

// ExplicitFlag is one explicitly set key.
type ExplicitFlag struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Origin string `json:"origin"`
}

// View returns the report view of f.
func (f *Flags) View() View {
	v := View{Tokens: f.Tokens(), Values: f, Explicit: []ExplicitFlag{}}
	for _, k := range f.ExplicitKeys() {
		s := f.explicit[k]
		v.Explicit = append(v.Explicit, ExplicitFlag{Key: k, Value: s.canon, Origin: s.origin.String()})
	}
	return v
}
