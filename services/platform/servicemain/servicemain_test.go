package servicemain

import (
	"context"
	"log/slog"
	"strings"
	"testing"
)

func TestNewLogger(t *testing.T) {
	for level, want := range map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "WARN": slog.LevelWarn, "error": slog.LevelError} {
		logger, err := newLogger(level)
		if err != nil {
			t.Fatalf("%s: %v", level, err)
		}
		if !logger.Enabled(context.Background(), want) || logger.Enabled(context.Background(), want-1) {
			t.Errorf("%s: the logger does not log from %v up", level, want)
		}
	}
	if _, err := newLogger("loud"); err == nil || !strings.Contains(err.Error(), `-log-level "loud": want debug, info, warn or error`) {
		t.Fatalf("a bad level: %v", err)
	}
}
