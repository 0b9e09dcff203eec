package mindir_test

import (
	"gkconv/internal/mindir"
	"gkconv/internal/mindir/check"
)

// Gives the internal tests `converter check` (see checkhook_test.go).
func init() {
	mindir.CheckBytesHook = func(data []byte, name string) (*mindir.CheckResult, error) {
		return result(check.Bytes(data, name))
	}
	mindir.CheckFileHook = func(path string) (*mindir.CheckResult, error) {
		return result(check.File(path))
	}
}

func result(rep *check.Report, err error) (*mindir.CheckResult, error) {
	if rep == nil {
		return nil, err
	}
	r := &mindir.CheckResult{Unchecked: rep.Unchecked, Summary: rep.Summary(), Passed: rep.OK()}
	for _, v := range rep.Violations {
		r.Violations = append(r.Violations, v.String())
	}
	return r, err
}
