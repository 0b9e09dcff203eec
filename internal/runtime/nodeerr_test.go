package runtime

import (
	"errors"
	"testing"

	"gkconv/internal/ir"
)

// A kernel error that already names the node is not prefixed again.
func TestNodeErrPrefixOnce(t *testing.T) {
	n := &ir.Node{Name: "add", Op: "Add"}
	if got := nodeErr(n, errors.New("bad")).Error(); got != "node add (Add): bad" {
		t.Errorf("got %q", got)
	}
	if got := nodeErr(n, errors.New("node add (Add): bad")).Error(); got != "node add (Add): bad" {
		t.Errorf("got %q", got)
	}
}
