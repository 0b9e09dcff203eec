package mindir

// The writer's tests check what they write with `converter check`, the
// validator in internal/mindir/check. That package imports this one, so
// these (internal) tests cannot import it; checkhook_ext_test.go, an
// external test file of this folder, can, and sets CheckBytesHook and
// CheckFileHook before any test runs.

// CheckResult is what these tests read of a check.Report.
type CheckResult struct {
	Violations []string // as `converter check` prints them
	Unchecked  []string // primitives outside the schema
	Summary    string
	Passed     bool // check.Report.OK
}

// OK reports whether the model broke no rule.
func (r *CheckResult) OK() bool { return r.Passed }

// CheckBytesHook and CheckFileHook are check.Bytes and check.File, set by
// checkhook_ext_test.go.
var (
	CheckBytesHook func(data []byte, name string) (*CheckResult, error)
	CheckFileHook  func(path string) (*CheckResult, error)
)

func checkBytes(data []byte, name string) (*CheckResult, error) { return CheckBytesHook(data, name) }

func checkFile(path string) (*CheckResult, error) { return CheckFileHook(path) }
