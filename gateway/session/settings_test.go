package session

import (
	"testing"

	"google.golang.org/protobuf/proto"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

func TestMaxActionRetriesIsClamped(t *testing.T) {
	t.Parallel()
	for in, want := range map[int32]int{-3: 0, 0: 0, 1: 1, 2: 2, 9: 2} {
		set, err := settingsOf(&distillv1.SessionStartRequest{Url: "http://x/", MaxActionRetries: proto.Int32(in)})
		if err != nil || set.retries != want {
			t.Errorf("max_action_retries %d: %d, %v; want %d", in, set.retries, err, want)
		}
	}
	if set, _ := settingsOf(&distillv1.SessionStartRequest{Url: "http://x/"}); set.retries != DefaultMaxActionRetries {
		t.Errorf("default retries = %d", set.retries)
	}
}
