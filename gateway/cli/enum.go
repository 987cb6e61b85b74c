package cli

import (
	"fmt"
	"slices"
	"strings"
)

// enumFlag is a string flag limited to a fixed set of values.
type enumFlag struct {
	value   string
	allowed []string
	// set says the command line gave the flag.
	set bool
}

func newEnum(def string, allowed ...string) *enumFlag {
	return &enumFlag{value: def, allowed: allowed}
}

func (e *enumFlag) String() string { return e.value }
func (e *enumFlag) Type() string   { return strings.Join(e.allowed, "|") }
func (e *enumFlag) Set(s string) error {
	if !slices.Contains(e.allowed, s) {
		return fmt.Errorf("must be one of %s", strings.Join(e.allowed, ", "))
	}
	e.value, e.set = s, true
	return nil
}
