package k8s

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// dockerfile is the text of deploy/docker/NAME.Dockerfile.
func dockerfile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docker", name+".Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// An image run on its own (docker run) listens where its pod would: the
// binaries' own default is loopback, useless in a container.
func TestDockerfilesListenOnThePodAddress(t *testing.T) {
	for _, svc := range contract {
		t.Run(svc.name, func(t *testing.T) {
			text := dockerfile(t, svc.name)
			want := regexp.MustCompile(fmt.Sprintf(`(?m)^ENV (?:.*\\\n)*?\s*DISTILL_LISTEN=0\.0\.0\.0:%d\b`, svc.grpcPort))
			if !want.MatchString(text) {
				t.Errorf("%s.Dockerfile does not set ENV DISTILL_LISTEN=0.0.0.0:%d", svc.name, svc.grpcPort)
			}
			if !regexp.MustCompile(fmt.Sprintf(`(?m)^EXPOSE %d\b`, svc.grpcPort)).MatchString(text) {
				t.Errorf("%s.Dockerfile does not expose %d", svc.name, svc.grpcPort)
			}
		})
	}
}

// The renderer image's comments say how Chromium is sandboxed as the
// manifests run it: the pod is the sandbox, Chromium's own is off.
func TestRendererDockerfileTellsTheSandboxTheManifestsUse(t *testing.T) {
	b := render(t, baseDir)
	c := container(t, b.workload(t, "renderer"), "renderer")
	noSandbox := envValue(t, c, "DISTILL_CHROMIUM_NO_SANDBOX") == "1"
	text := dockerfile(t, "renderer")
	if mentions := strings.Contains(text, "DISTILL_CHROMIUM_NO_SANDBOX=1"); mentions != noSandbox {
		t.Errorf("renderer.Dockerfile mentions DISTILL_CHROMIUM_NO_SANDBOX=1: %v; the manifests set it: %v", mentions, noSandbox)
	}
	if noSandbox && strings.Contains(text, "keeps its own sandbox") {
		t.Error("renderer.Dockerfile says Chromium keeps its own sandbox, but the manifests turn it off")
	}
}
