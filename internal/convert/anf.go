package convert

import (
	"fmt"
	"log/slog"

	"gkconv/internal/akgcfg"
	"gkconv/internal/fusion"
	"gkconv/internal/ir"
)

// anfFuse runs converter_lite's graph fusion passes (fusion.RunAnf: Conv +
// BatchNorm/Scale/bias Add/ReLU, MatMul + bias Add) on every conversion
// before graph-kernel fusion, as converter_lite's RunFusionPass; none with
// --optimize=none. Switches: [registry] fusion_blacklists and
// disable_fusion, and for Ascend [ascend_context]
// fusion_switch_config_file_path. The passes go into the report.
func anfFuse(g *ir.Graph, cfg *akgcfg.Config, backend akgcfg.Backend, fo fuseOptions, rep *Report) error {
	o := fusion.AnfOptions{Backend: backend, Blacklist: cfg.FusionBlacklist()}
	if cfg != nil {
		o.Flags = cfg.Flags
	}
	off, err := cfg.FusionOff()
	if err != nil {
		return Errorf(CodeParamInvalid, "%v", err)
	}
	switch {
	case fo.disabled:
		o.Off = "--optimize=none: converter_lite's fusion passes are off"
	case off:
		o.Off = "disabled by [registry] disable_fusion=on"
	}
	if path := cfg.FusionSwitchPath(); path != "" && o.Off == "" {
		if backend.Device != akgcfg.Ascend {
			rep.warn("[ascend_context] fusion_switch_config_file_path=" + path + ": applies to --optimize=ascend_oriented only; ignored")
		} else {
			sw, err := akgcfg.LoadFusionSwitch(path)
			if err != nil {
				return Errorf(CodeParamInvalid, "%v", err)
			}
			o.Switch = sw
		}
	}
	res, warns, err := fusion.RunAnf(g, o)
	for _, b := range bodies(g) {
		if err != nil {
			break
		}
		br, _, berr := fusion.RunAnf(b, o)
		if berr != nil {
			err = fmt.Errorf("body %s: %w", b.Name, berr)
			break
		}
		res.NodesBefore += br.NodesBefore
		res.NodesAfter += br.NodesAfter
	}
	source := "config"
	if cfg != nil && cfg.Path != "" {
		source = cfg.Path
	}
	for _, w := range warns {
		rep.warn(source + ": " + w)
	}
	if err != nil {
		return Errorf(CodeError, "fusion passes: %v", err)
	}
	for _, p := range res.Passes {
		rep.Passes = append(rep.Passes, ReportPass{Stage: p.Stage, Name: p.Name, Level: p.Level, Ran: p.Ran, Changed: p.Changed, Note: p.Note})
	}
	slog.Info("fusion passes", "nodes_before", res.NodesBefore, "nodes_after", res.NodesAfter)
	return nil
}
