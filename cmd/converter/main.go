// Command converter converts ONNX and MindIR models into offline .mindir
// models with graph-kernel fusion (converter_lite's flags), and runs them
// (`converter benchmark`).
package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"gkconv/internal/convert"
	"gkconv/internal/runtime/cpuisa"
)

var logLevel = new(slog.LevelVar)

func main() {
	ensureBLASCoreType()
	if len(os.Args) == 3 && os.Args[1] == convert.RunKernelCommand {
		// A kernel self-check child (convert.runCompiledIsolated).
		if err := convert.RunKernelChild(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if exe, err := os.Executable(); err == nil {
		convert.SelfCheckExecutable = exe
	}
	os.Exit(run(os.Args[1:]))
}

// Failures carry MindSpore Lite's status code (convert.Error) for the result
// line; the process exit status is 1 for every failure. A command prints its
// own result line; a failure before it runs (an unknown flag, an extra
// argument, a bad --logLevel) gets the ERROR line and the result line here,
// so no failure is silent.
func run(args []string) int {
	root := newRootCmd()
	if err := cpuisa.FromEnv(); err != nil {
		cmd, _, findErr := root.Find(args) // the result line of the command asked for
		if findErr != nil {
			cmd = nil
		}
		printError(err)
		resultf("%s", failureLine(cmd, convert.CodeParamInvalid, err))
		return 1
	}
	root.SetArgs(args)
	ran := false
	wrapRunE(root, &ran)
	cmd, err := root.ExecuteC()
	flushWarnings()
	if err == nil {
		return 0
	}
	if !ran {
		code := convert.CodeParamInvalid
		var ce *convert.Error
		if errors.As(err, &ce) {
			code = ce.Code
		}
		printError(err)
		resultf("%s", failureLine(cmd, code, err))
	}
	return 1
}

// wrapRunE records that a command's own RunE started (it prints its result
// line itself).
func wrapRunE(c *cobra.Command, ran *bool) {
	if f := c.RunE; f != nil {
		c.RunE = func(cmd *cobra.Command, args []string) error {
			*ran = true
			return f(cmd, args)
		}
	}
	for _, sub := range c.Commands() {
		wrapRunE(sub, ran)
	}
}

// failureLine is the result line of a command that failed.
func failureLine(cmd *cobra.Command, code int, err error) string {
	name := ""
	if cmd != nil {
		name = cmd.Name()
	}
	switch name {
	case "benchmark":
		model, _ := cmd.Flags().GetString("modelFile")
		if model == "" {
			model = "(no --modelFile)"
		}
		return fmt.Sprintf("Run Benchmark %s Failed. %v", filepath.Base(model), oneLine(err))
	case "check":
		return fmt.Sprintf("CHECK RESULT FAILED:%d", code)
	case "inspect":
		return fmt.Sprintf("INSPECT RESULT FAILED:%d", code)
	case "bisect":
		return fmt.Sprintf("BISECT RESULT FAILED:%d", code)
	}
	return fmt.Sprintf("CONVERT RESULT FAILED:%d", code)
}

func newRootCmd() *cobra.Command {
	root := newConvertCmd()
	root.PersistentFlags().BoolP("verbose", "v", false, "verbose logs (same as --logLevel=debug)")
	root.PersistentFlags().String("logLevel", "warn", "log level: debug, info, warn, error")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		lvl, _ := cmd.Flags().GetString("logLevel")
		if v, _ := cmd.Flags().GetBool("verbose"); v {
			lvl = "debug"
		}
		if err := logLevel.UnmarshalText([]byte(lvl)); err != nil {
			return convert.Errorf(convert.CodeParamInvalid, "--logLevel=%s: want debug, info, warn or error", lvl)
		}
		slog.SetDefault(slog.New(newLogHandler(stderr, logLevel)))
		return nil
	}
	root.AddCommand(newBenchmarkCmd(), newInspectCmd())
	root.AddCommand(newCheckCmd(), newVersionCmd(), newBisectCmd())
	root.Version = versionString()
	root.SilenceUsage = true
	root.SilenceErrors = true
	return root
}
