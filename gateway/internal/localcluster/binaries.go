package localcluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"
)

// BinEnv names the environment variable that holds the folder of the
// binaries a cluster runs. `make test` builds them there once per run
// (make test-binaries) for every test package that runs them; a test
// started without it builds its own with Build.
const BinEnv = "DISTILL_TEST_BIN"

// Binary is a program a cluster runs, and the package it is built from.
// Ours is false for a program that is not distill's.
type Binary struct {
	Name, Package string
	Ours          bool
}

// binaries are the programs a cluster runs. NATS's comes from the module
// the fetcher already requires; it is not ours, so it is never built with
// the race detector: its races are not distill's to fail on, and it runs
// faster without.
var binaries = []Binary{
	{"distill", "./gateway/cmd/distill", true},
	{"fetcher", "./services/fetcher/cmd/fetcher", true},
	{"extractor", "./services/extractor/cmd/extractor", true},
	{"renderer", "./services/renderer/cmd/renderer", true},
	{"nats-server", "github.com/nats-io/nats-server/v2", false},
}

// Binaries are the programs a cluster runs, a copy the caller may keep.
func Binaries() []Binary { return slices.Clone(binaries) }

// Build compiles the named binaries, all of them when none is named, into
// dir in one go build from the checkout at root (one build shares the
// packages they have in common). A caller built with the race detector
// gets binaries built with it too: the packages are then the ones its own
// test binary was compiled from, already in the build cache, and the
// processes it starts are checked for races as it is. NATS's never is.
func Build(root, dir string, names ...string) error {
	for _, ours := range []bool{true, false} {
		args := []string{"build", "-o", dir + string(filepath.Separator)}
		if raceEnabled && ours {
			args = append(args, "-race")
		}
		n := len(args)
		for _, b := range binaries {
			if b.Ours == ours && (len(names) == 0 || slices.Contains(names, b.Name)) {
				args = append(args, b.Package)
			}
		}
		if len(args) == n {
			continue
		}
		cmd := exec.Command("go", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go %v: %v\n%s", args, err, out)
		}
	}
	return nil
}

// Check returns an error unless dir holds the named binaries. It stats
// each: Go's test cache then keeps a result that used them only while
// they are unchanged.
func Check(dir string, names ...string) error {
	for _, name := range names {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			return fmt.Errorf("%w (make test-binaries builds the binaries)", err)
		}
		if st.IsDir() || st.Mode()&0o111 == 0 {
			return fmt.Errorf("%s is not an executable", filepath.Join(dir, name))
		}
	}
	return nil
}

// Distill returns the distill binary a test package runs: the one in
// BinEnv's folder, or else one built from the checkout at root into a new
// temporary folder named after prefix, which it returns as built for the
// package to remove when its tests end ("" when it built none).
func Distill(root, prefix string) (bin, built string, err error) {
	if dir := os.Getenv(BinEnv); dir != "" {
		return filepath.Join(dir, "distill"), "", Check(dir, "distill")
	}
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", "", err
	}
	return filepath.Join(dir, "distill"), dir, Build(root, dir, "distill")
}

// NPMInstall installs the Node packages that dir's lock file pins, unless
// they are installed and no older than it: npm writes
// node_modules/.package-lock.json on every install, as make's install
// targets, which run before the suite, also read it.
func NPMInstall(dir string) error {
	installed, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json"))
	if err == nil {
		lock, err := os.Stat(filepath.Join(dir, "package-lock.json"))
		if err == nil && !installed.ModTime().Before(lock.ModTime()) {
			return nil
		}
	}
	cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm ci in %s: %v\n%s", dir, err, out)
	}
	now := time.Now()
	return os.Chtimes(filepath.Join(dir, "node_modules", ".package-lock.json"), now, now)
}
