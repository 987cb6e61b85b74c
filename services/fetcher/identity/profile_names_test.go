package identity

import (
	"slices"
	"testing"

	"distill.dev/proto/fetchopts"
)

// The names every door validates FetchOptions.browser against are the
// profiles there are, and each is one Named finds.
func TestNamesAreTheContractsProfiles(t *testing.T) {
	if got, want := Names(), fetchopts.BrowserProfiles(); !slices.Equal(got, want) {
		t.Fatalf("identity has the profiles %v, fetchopts validates against %v", got, want)
	}
	for _, name := range Names() {
		if p, err := Named(name); err != nil || p == nil {
			t.Errorf("Named(%q) = %v, %v", name, p, err)
		}
	}
}
