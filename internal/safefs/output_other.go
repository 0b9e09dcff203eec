//go:build !unix

package safefs

import "errors"

func dupFD(int) (int, error) { return -1, errors.New("writing to a descriptor by name is Unix-only") }
