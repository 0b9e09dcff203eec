package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"gkconv/internal/convert"
	"gkconv/internal/mindir/check"
)

func newCheckCmd() *cobra.Command {
	var modelFile string
	cmd := &cobra.Command{
		Use:   "check --modelFile=model.mindir",
		Short: "Validate a .mindir file against MindSpore's loader rules (load_model.cc)",
		Long: `check reads a MindIR file the way MindSpore's loader (mindspore/core/load_mindir/load_model.cc)
does and lists every rule it breaks: header fields, names in the loader's shared name map (primitives,
functions, nodes, inputs), attribute encodings, node abstracts ("shape"), parameter data, the primitive
schema (input counts, attribute types, required attributes) and converter_lite's GraphKernel Custom layout.

One line per violation: "graph/node: attr: rule: want X, got Y (load_model.cc:NNN Function)", then a
summary. The last line is "CHECK RESULT SUCCESS:0", or "CHECK RESULT FAILED:<code>" with exit status 1
when a rule is broken or the file cannot be checked (an ERROR: line on stderr names the file and reason).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			err := runCheck(modelFile)
			if err != nil {
				var vf *violationsFound
				if !errors.As(err, &vf) {
					printError(err)
				}
				resultf("CHECK RESULT FAILED:%d", convert.Code(err))
				return err
			}
			resultf("CHECK RESULT SUCCESS:0")
			return nil
		},
	}
	cmd.Flags().StringVar(&modelFile, "modelFile", "", ".mindir model to check")
	return cmd
}

// violationsFound: the model was checked and broke rules (already listed).
type violationsFound struct{ n int }

func (v *violationsFound) Error() string { return fmt.Sprintf("%d violation(s)", v.n) }

func runCheck(modelFile string) error {
	if modelFile == "" {
		return convert.Errorf(convert.CodeParamInvalid, "--modelFile is required")
	}
	rep, err := check.File(modelFile)
	if err != nil {
		if !strings.Contains(err.Error(), modelFile) {
			err = fmt.Errorf("%s: %w", modelFile, err)
		}
		return &convert.Error{Code: convert.CodeError, Err: err}
	}
	for _, v := range rep.Violations {
		sayf("%s\n", v.String())
	}
	if rep.Omitted > 0 {
		sayf("... %d more violation(s) not listed\n", rep.Omitted)
	}
	if len(rep.Unchecked) > 0 {
		sayf("note: %d primitive(s) not in the schema table, inputs and attributes not checked against it: %s\n",
			len(rep.Unchecked), strings.Join(rep.Unchecked, ", "))
	}
	sayf("Checked %s\n", rep.Summary())
	if !rep.OK() {
		n := len(rep.Violations) + rep.Omitted
		return &convert.Error{Code: convert.CodeError, Err: &violationsFound{n}}
	}
	return nil
}
