package convert

import (
	"errors"
	"fmt"

	"gkconv/internal/textsafe"
)

// MindSpore Lite status codes (include/errorcode.h) that a failed conversion
// carries; converter_lite prints them as "CONVERT RESULT FAILED:<code>".
const (
	CodeError        = -1   // RET_ERROR: any other failure
	CodeNotSupport   = -7   // RET_NOT_SUPPORT: an unsupported feature
	CodeNotFindOp    = -500 // RET_NOT_FIND_OP: unsupported op(s), all listed
	CodeParamInvalid = -600 // RET_PARAM_INVALID: a bad option or config
)

// Error is a failed conversion (or check) with its MindSpore Lite status
// code. Its message names the file, node and reason.
type Error struct {
	Code int // one of the Code* constants (negative)
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Code is the status code of err: 0 for nil, the code of an *Error in its
// chain, else CodeError.
func Code(err error) int {
	if err == nil {
		return 0
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeError
}

// Errorf returns an *Error with code and a formatted message. Its string
// arguments (names of nodes, bodies, files: text of a model or a config)
// are escaped (textsafe.Escape), so each stays on its line and cannot carry
// terminal control sequences; error arguments keep their own lines (a list
// of problems), escaped where they were made.
func Errorf(code int, format string, args ...any) error {
	return &Error{Code: code, Err: fmt.Errorf(format, textsafe.Args(args)...)}
}
