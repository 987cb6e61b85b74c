package e2e

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"distill.dev/proto/failure"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// Sessions live in NATS, encrypted, so any gateway takes any session's next
// step and a gateway that dies loses none.
func TestSessionsAcrossTwoGateways(t *testing.T) {
	t.Parallel()
	c := startInProcess(t, inProcessOpts{Gateways: 2})
	site := newPages(t, 0)
	a, b := c.client(0), c.client(1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	started, err := a.SessionStart(ctx, &distillv1.SessionStartRequest{Url: site.URL + "/login", AllowLocal: true, Js: distillv1.JsMode_JS_MODE_OFF})
	if err != nil {
		t.Fatal(err)
	}
	id := started.GetView().GetSessionId()
	submitted, err := b.SessionSubmitForm(ctx, &distillv1.SessionSubmitFormRequest{
		SessionId: id, FormId: "form_0", Confirm: true,
		Values: map[string]*distillv1.FieldValues{"user": {Values: []string{"alice"}}},
	})
	if err != nil || submitted.GetView().GetSnapshot().GetTitle() != "Members area" {
		t.Fatalf("sign-in through the second gateway: %v %v", submitted.GetView().GetSnapshot().GetTitle(), err)
	}

	// The first gateway goes away; the session does not go with it.
	c.Gateways[0].stop(t)
	followed, err := b.SessionFollow(ctx, &distillv1.SessionFollowRequest{SessionId: id, ActionId: "link_0"})
	if err != nil || followed.GetView().GetSnapshot().GetTitle() != "Page 7" || followed.GetView().GetLoop().GetState().GetStepsTaken() != 3 {
		t.Fatalf("follow after the first gateway died: %v", err)
	}
	observed, err := b.SessionObserve(ctx, &distillv1.SessionObserveRequest{SessionId: id, Url: site.URL + "/members"})
	if err != nil || observed.GetView().GetSnapshot().GetTitle() != "Members area" {
		t.Fatalf("the cookie did not survive: %v", err)
	}
	// So does the history of every page the session moved to, whichever
	// gateway took the step.
	want := []string{site.URL + "/login", site.URL + "/members", followed.GetView().GetCurrentUrl(), site.URL + "/members"}
	if got := observed.GetView().GetRedirectHistory(); !slices.Equal(got, want) {
		t.Fatalf("redirect_history = %v, want %v", got, want)
	}

	// What rests in NATS is sealed.
	nc, err := nats.Connect(c.NATSURL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	kv, err := js.KeyValue(ctx, "distill_sessions")
	if err != nil {
		t.Fatal(err)
	}
	e, err := kv.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"alice-e2e-cookie", "Members area", site.URL} {
		if bytes.Contains(e.Value(), []byte(secret)) {
			t.Errorf("the stored session shows %q", secret)
		}
	}

	if _, err := b.SessionClose(ctx, &distillv1.SessionCloseRequest{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.SessionFollow(ctx, &distillv1.SessionFollowRequest{SessionId: id, ActionId: "link_0"}); failure.CodeOf(err) != failure.NotFound {
		t.Fatalf("after close: %v", err)
	}
}

func closeReq(id string) *distillv1.SessionCloseRequest {
	return &distillv1.SessionCloseRequest{SessionId: id}
}
