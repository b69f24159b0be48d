package vectorstore

import (
	"testing"
	"time"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/errs"
)

type log struct {
	s   State
	seq uint64
}

// do returns what applies a decision's events, failing the test on its error: l.do(t)(Decide(...)).
func (l *log) do(t *testing.T) func([]events.Event, error) {
	return func(evs []events.Event, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		l.apply(evs)
	}
}

func (l *log) apply(evs []events.Event) {
	for _, ev := range evs {
		l.seq++
		l.s.Apply(events.Envelope{AggregateID: "vs_1", Account: "acct_a", Sequence: l.seq, Time: time.Unix(int64(l.seq)*86400, 0), Event: ev})
	}
}

func file(id string) NewFile { return NewFile{FileID: id, Filename: id + ".txt", Bytes: 10} }

func done(id string, status string) events.VectorStoreFileProcessed {
	p := events.VectorStoreFileProcessed{FileID: id, Status: status, UsageBytes: 100}
	if status == StatusFailed {
		p.LastError = &events.VectorStoreFileError{Code: "unsupported_file", Message: "no"}
	}
	return p
}

func TestABatchsStatusFollowsItsFiles(t *testing.T) {
	l := &log{}
	l.do(t)(Create(&l.s, events.VectorStoreCreated{Name: "kb"}, []NewFile{file("file-a")}))
	l.do(t)(AddFiles(&l.s, "acct_a", "vs_1", []NewFile{file("file-b"), file("file-c")}, "vsfb_1"))
	v, _ := l.s.BatchView("vsfb_1")
	if v.Status != StatusInProgress || v.Counts.InProgress != 2 || l.s.Status(time.Unix(0, 0)) != StatusInProgress || l.s.Counts.Total != 3 {
		t.Fatalf("a new batch: %+v, store %+v", v, l.s.Counts)
	}
	l.apply(Processed(&l.s, done("file-b", StatusCompleted), l.s.Files["file-b"].Seq))
	l.apply(Processed(&l.s, done("file-c", StatusFailed), l.s.Files["file-c"].Seq))
	v, _ = l.s.BatchView("vsfb_1")
	if v.Status != StatusCompleted || v.Counts.Completed != 1 || v.Counts.Failed != 1 {
		t.Fatalf("a batch with one file completed and one failed: %+v", v)
	}
	if _, err := CancelBatch(&l.s, "acct_a", "vs_1", "vsfb_1"); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("cancelling a completed batch: %v", err)
	}
	if l.s.UsageBytes != 100 {
		t.Fatalf("usage counts completed files only: %d", l.s.UsageBytes)
	}
}

func TestCancellingABatchCancelsItsFilesStillInProgress(t *testing.T) {
	l := &log{}
	l.do(t)(Create(&l.s, events.VectorStoreCreated{}, nil))
	l.do(t)(AddFiles(&l.s, "acct_a", "vs_1", []NewFile{file("file-a"), file("file-b")}, "vsfb_1"))
	addedA := l.s.Files["file-a"].Seq
	l.apply(Processed(&l.s, done("file-b", StatusCompleted), l.s.Files["file-b"].Seq))
	l.do(t)(CancelBatch(&l.s, "acct_a", "vs_1", "vsfb_1"))
	v, _ := l.s.BatchView("vsfb_1")
	if v.Status != StatusCancelled || l.s.Files["file-a"].Status != StatusCancelled || l.s.Files["file-b"].Status != StatusCompleted {
		t.Fatalf("after the cancel: %+v, a %s, b %s", v, l.s.Files["file-a"].Status, l.s.Files["file-b"].Status)
	}
	if evs := Processed(&l.s, done("file-a", StatusCompleted), addedA); evs != nil {
		t.Fatalf("the processing of a cancelled file was recorded: %v", evs)
	}
	if evs, err := CancelBatch(&l.s, "acct_a", "vs_1", "vsfb_1"); evs != nil || err != nil {
		t.Fatalf("cancelling again: %v %v", evs, err)
	}
}

func TestProcessingIsRecordedOnlyForTheAdditionItFollows(t *testing.T) {
	l := &log{}
	l.do(t)(Create(&l.s, events.VectorStoreCreated{}, []NewFile{file("file-a")}))
	first := l.s.Files["file-a"].Seq
	l.do(t)(AddFiles(&l.s, "acct_a", "vs_1", []NewFile{file("file-a")}, "")) // added again
	if evs := Processed(&l.s, done("file-a", StatusCompleted), first); evs != nil {
		t.Fatal("the first addition's processing was recorded for the second")
	}
	l.do(t)(RemoveFile(&l.s, "acct_a", "vs_1", "file-a"))
	if evs := Processed(&l.s, done("file-a", StatusCompleted), l.seq-1); evs != nil {
		t.Fatal("a removed file's processing was recorded")
	}
	if len(l.s.Order) != 0 || l.s.Counts.Total != 0 {
		t.Fatalf("after removal: %+v", l.s.Counts)
	}
}

func TestAnotherAccountFindsNoStore(t *testing.T) {
	l := &log{}
	l.do(t)(Create(&l.s, events.VectorStoreCreated{}, nil))
	for name, decide := range map[string]func() ([]events.Event, error){
		"add":    func() ([]events.Event, error) { return AddFiles(&l.s, "acct_b", "vs_1", []NewFile{file("file-x")}, "") },
		"modify": func() ([]events.Event, error) { return Modify(&l.s, "acct_b", "vs_1", nil, nil, nil) },
		"delete": func() ([]events.Event, error) { return Delete(&l.s, "acct_b", "vs_1") },
		"remove": func() ([]events.Event, error) { return RemoveFile(&l.s, "acct_b", "vs_1", "file-x") },
	} {
		if _, err := decide(); errs.CodeOf(err) != errs.NotFound {
			t.Errorf("%s by another account: %v", name, err)
		}
	}
}

func TestAStoreExpiresAfterItsLastActivity(t *testing.T) {
	l := &log{}
	l.do(t)(Create(&l.s, events.VectorStoreCreated{ExpiresAfter: &events.VectorStoreExpiry{Anchor: "last_active_at", Days: 2}}, nil))
	created := l.s.LastActive
	l.do(t)(Modify(&l.s, "acct_a", "vs_1", nil, map[string]string{"k": "v"}, nil))
	if !l.s.LastActive.After(created) {
		t.Fatal("a modify is activity")
	}
	if l.s.Status(l.s.LastActive.Add(47*time.Hour)) != StatusCompleted || l.s.Status(l.s.LastActive.Add(48*time.Hour)) != StatusExpired {
		t.Fatalf("expiry: at %v", l.s.ExpiresAt())
	}
}
