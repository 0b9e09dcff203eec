package akgcfg

import (
	"errors"
	"strings"
	"testing"
)

func FuzzParseFlags(f *testing.F) {
	for _, s := range []string{
		"--opt_level=2 --enable_expand_ops=Gelu,Softmax --dump_as_text",
		"--opt_level=7 --opt_level=1 --opt_levle=3",
		"--a=b=c -- --= x --reduce_fuse_depth=-1 --online_tuning=+3",
		"--enable_pass=1.2,cluster.graph_kernel_cluster --cpu_arch=x86_64 --kernel_generator=DVM",
		"--enable_dynamic_shape_fusion=on --enable_auto_tensor_inplace=True --composite_op_limit_size=99999999999",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.Contains(s, "--path") {
			t.Skip("reads files")
		}
		fl, warns, err := ParseFlags(s, EnvVar)
		if fl == nil {
			t.Fatal("nil Flags")
		}
		for _, w := range warns {
			if w.File != EnvVar {
				t.Fatalf("warning without its source: %v", w)
			}
		}
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) || ce.File != EnvVar {
				t.Fatalf("error %v is not located", err)
			}
			return
		}
		if fl.OptLevel < 0 || fl.OptLevel > 3 {
			t.Fatalf("opt_level %d", fl.OptLevel)
		}
		// The canonical tokens parse back to themselves, and any warning they
		// give (a value warning such as an unknown kernel_generator) was
		// already given for the original string.
		tok := fl.Tokens()
		g, w2, err := ParseFlags(tok, EnvVar)
		if err != nil || g.Tokens() != tok {
			t.Fatalf("round trip of %q: %q, %v, %v", tok, g.Tokens(), w2, err)
		}
		seen := map[string]bool{}
		for _, w := range warns {
			seen[w.Message] = true
		}
		for _, w := range w2 {
			if !seen[w.Message] {
				t.Fatalf("round trip of %q gives a new warning: %v", tok, w)
			}
		}
		for _, b := range []Backend{{Device: CPU}, {Device: GPU}, {Device: Ascend, Soc: "Ascend910B1"}} {
			fl.Resolve(b)
			if fl.ReduceFuseDepth < 0 {
				t.Fatalf("reduce_fuse_depth %d after Resolve", fl.ReduceFuseDepth)
			}
		}
		if _, err := fl.MarshalJSON(); err != nil {
			t.Fatal(err)
		}
	})
}

func FuzzLoadConfig(f *testing.F) {
	for _, s := range []string{
		"[graph_kernel_param]\nopt_level=2\nenable_expand_ops=Square,Gelu\n",
		"# c\n[graph_kernel_param]\nopt_level = high\n[ascend_context\n",
		"x=1\n[registry]\nplugin_path=a\nplugin_path=\nplugin_path=b\n[bogus]\nk=v",
		"[micro_param]\nk=`a\nb`\nj=\"\"\"x\"\"\"\n\"q\"=1\n-=2\n[graph_kernel_param]\ndump_as_text=''\ndump_as_text= #c\n",
		"\xef\xbb\xbf[graph_kernel_param]\r\nopt_level=9\r\n=\r\n[]\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if strings.Contains(string(data), "path") {
			t.Skip("reads files")
		}
		c, err := ParseConfig("fuzz.cfg", data)
		if err != nil {
			if c != nil {
				t.Fatal("config and error both returned")
			}
			var ce *Error
			if !errors.As(err, &ce) || ce.File != "fuzz.cfg" || ce.Line < 1 {
				t.Fatalf("error %v is not located", err)
			}
			return
		}
		if c.Flags == nil || c.Sections == nil {
			t.Fatal("incomplete config")
		}
		nLines := strings.Count(string(data), "\n") + 1
		for _, w := range c.Warnings {
			if w.File != "fuzz.cfg" || w.Line < 1 || w.Line > nLines {
				t.Fatalf("bad warning location %v (%d lines)", w, nLines)
			}
		}
		for _, k := range c.Flags.ExplicitKeys() {
			if o, _ := c.Flags.Origin(k); o.Line < 1 || o.Line > nLines {
				t.Fatalf("bad origin %v for %s", o, k)
			}
		}
		_ = c.FusionEnabled()
	})
}
