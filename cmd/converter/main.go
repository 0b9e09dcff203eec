// Command converter converts ONNX and MindIR models into offline .mindir
// models with graph-kernel fusion (converter_lite's flags), and runs them
// (`converter benchmark`).
package main

import (
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"gkconv/internal/convert"
)

var logLevel = new(slog.LevelVar)

func main() {
	ensureBLASCoreType()
	os.Exit(run(os.Args[1:]))
}

// Failures carry MindSpore Lite's status code (convert.Error) for the result
// line; the process exit status is 1 for every failure.
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
			return convert.Errorf(convert.CodeParamInvalid, "--logLevel=%s: want debug, info, warn or error", lvl)
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
