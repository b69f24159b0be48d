package natsx_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/internal/natsx"
	"github.com/contrailhq/contrail/internal/natsx/natstest"
)

// TestAnOrderedReaderEndsWhenItsConsumerIsGone: a reader reads in order from where it is told, and when its
// consumer goes (its server died, or it was deleted) it ends with an error, for its caller to open a new one from
// where it is, rather than make a new consumer itself: the library's ordered consumer does that for as long as the
// stream has no leader, under a lock that kept a projection still long after a new leader was elected.
func TestAnOrderedReaderEndsWhenItsConsumerIsGone(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := natstest.Start(t)
	if _, err := srv.JS.CreateStream(ctx, jetstream.StreamConfig{Name: "LOG", Subjects: []string{"log.>"}}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"log.a", "log.b", "log.a", "log.a"} {
		if _, err := srv.JS.Publish(ctx, s, []byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	r, err := natsx.OpenOrdered(ctx, srv.JS, natsx.OrderedConfig{Stream: "LOG", Filters: []string{"log.a"}, After: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Delete()
	for _, want := range []uint64{3, 4} {
		m, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if md, _ := m.Metadata(); md.Sequence.Stream != want {
			t.Fatalf("read sequence %d, want %d", md.Sequence.Stream, want)
		}
	}
	if err := srv.JS.DeleteConsumer(ctx, "LOG", r.Consumer().CachedInfo().Name); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.JS.Publish(ctx, "log.a", []byte("after")); err != nil {
		t.Fatal(err)
	}
	if m, err := r.Next(); err == nil {
		md, _ := m.Metadata()
		t.Fatalf("the reader read sequence %d after its consumer was deleted; want an error", md.Sequence.Stream)
	}
	if _, err := r.Next(); err == nil {
		t.Fatal("a reader that ended read on")
	}
}
