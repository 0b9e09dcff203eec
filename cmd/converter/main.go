// Command converter converts ONNX and MindIR models into offline .mindir
// models with graph-kernel fusion (converter_lite's flags), and runs them
// (`converter benchmark`).
package main

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/spf13/cobra"
)

var logLevel = new(slog.LevelVar)

func main() {
	ensureBLASCoreType()
	os.Exit(run(os.Args[1:]))
}

// exitError carries the converter_lite status code printed in the result
// line; the process exit status is 1 for every failure.
type exitError struct {
	code int // MindSpore status code (negative)
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// MindSpore Lite status codes used in result lines.
const (
	retError        = -1
	retNotSupport   = -7
	retParamInvalid = -600
	retNotFindOp    = -500
)

func failf(code int, format string, args ...any) error {
	return &exitError{code: code, err: fmt.Errorf(format, args...)}
}

func run(args []string) int {
	root := newRootCmd()
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		return 1
	}
	return 0
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
			return failf(retParamInvalid, "--logLevel=%s: want debug, info, warn or error", lvl)
		}
		slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel})))
		return nil
	}
	root.AddCommand(newBenchmarkCmd(), newInspectCmd())
	root.AddCommand(newCheckCmd())
	root.SilenceUsage = true
	root.SilenceErrors = true
	return root
}
