package natsx_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/contrailhq/contrail/internal/natsx"
	"github.com/contrailhq/contrail/internal/natsx/natstest"
)

// TestASubscriptionIsRegisteredBeforeTheRequestItListensFor: a message published from another connection the moment
// Registered returns reaches the subscription, every time. Without it the server has often not yet read the
// subscription, and the message goes to nobody.
func TestASubscriptionIsRegisteredBeforeTheRequestItListensFor(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	other := srv.Connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range 200 {
		subject := fmt.Sprintf("live.%d", i)
		ch := make(chan *nats.Msg, 1)
		sub, err := srv.NC.ChanSubscribe(subject, ch)
		if err != nil {
			t.Fatal(err)
		}
		natsx.Registered(ctx, srv.NC)
		if err := other.Publish(subject, []byte("delta")); err != nil {
			t.Fatal(err)
		}
		// Published after the server had the subscription: a round trip on the publisher's connection delivers it.
		if err := other.FlushWithContext(ctx); err != nil {
			t.Fatal(err)
		}
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
			t.Fatalf("message %d published after Registered went to nobody", i)
		}
		_ = sub.Unsubscribe()
	}
}
