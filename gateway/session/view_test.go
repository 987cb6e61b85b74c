package session

import (
	"testing"

	"google.golang.org/protobuf/proto"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

func TestCapActions(t *testing.T) {
	t.Parallel()
	snapshot := func() *distillv1.Distilled {
		return &distillv1.Distilled{
			Actions: &distillv1.Actions{
				Links: []*distillv1.LinkAction{{ActionId: "link_0"}, {ActionId: "link_1"}, {ActionId: "link_2"}},
				Forms: []*distillv1.FormAction{{ActionId: "form_0", Fields: []*distillv1.FormField{{Name: "a"}, {Name: "b"}, {Name: "csrf"}}}},
			},
			Diagnostics: &distillv1.Diagnostics{ActionCount: 4},
		}
	}
	t.Run("no cap is the snapshot itself", func(t *testing.T) {
		t.Parallel()
		d := snapshot()
		if got := capActions(d, 0); got != d {
			t.Fatal("an uncapped view copied the snapshot")
		}
	})
	t.Run("a cap cuts a copy", func(t *testing.T) {
		t.Parallel()
		d := snapshot()
		got := capActions(d, 2)
		if len(got.GetActions().GetLinks()) != 2 || len(got.GetActions().GetForms()[0].GetFields()) != 2 || got.GetDiagnostics().GetActionCount() != 3 {
			t.Fatalf("capped = %v", got)
		}
		if !proto.Equal(d, snapshot()) {
			t.Fatalf("the cap changed the session's snapshot: %v", d)
		}
	})
}
