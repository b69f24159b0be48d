package natsx

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
)

// A leader read is tried this many times, each bounded: an election takes a few seconds.
const (
	leaderAttempts       = 5
	leaderAttemptTimeout = 2 * time.Second
)

// LeaderKVGet reads the value of one key of a KV bucket as the bucket's stream leader holds it. KeyValue.Get uses
// direct gets when the bucket allows them, which any replica answers, so on a cluster a read right after a write
// may find a follower that has not applied it yet; the leader has every acknowledged write. It reports false when
// the key has no value (never written, deleted or purged).
func LeaderKVGet(ctx context.Context, nc *nats.Conn, bucket, key string) ([]byte, bool, error) {
	req, _ := json.Marshal(map[string]string{"last_by_subj": "$KV." + bucket + "." + key})
	var r struct {
		Error *struct {
			Code        int    `json:"code"`
			Description string `json:"description"`
		} `json:"error,omitempty"`
		Message *struct {
			Header []byte `json:"hdrs,omitempty"`
			Data   []byte `json:"data,omitempty"`
		} `json:"message,omitempty"`
	}
	// A leader that dies after it was asked never answers, and a server that is restarting answers "temporarily
	// unavailable" (503): each attempt is bounded, and asked again (a new leader answers).
	for attempt := 0; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, leaderAttemptTimeout)
		msg, err := nc.RequestWithContext(actx, "$JS.API.STREAM.MSG.GET.KV_"+bucket, req)
		cancel()
		last := attempt == leaderAttempts-1 || ctx.Err() != nil
		if err != nil {
			if last {
				return nil, false, fmt.Errorf("read %s/%s from the leader: %w", bucket, key, err)
			}
			continue
		}
		r.Error, r.Message = nil, nil
		if err := json.Unmarshal(msg.Data, &r); err != nil {
			return nil, false, fmt.Errorf("read %s/%s from the leader: decode reply: %w", bucket, key, err)
		}
		if r.Error == nil || r.Error.Code != 503 || last {
			break
		}
		select {
		case <-ctx.Done():
			return nil, false, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	if r.Error != nil {
		if r.Error.Code == 404 {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("read %s/%s from the leader: %s", bucket, key, r.Error.Description)
	}
	if r.Message == nil {
		return nil, false, nil
	}
	// A delete or purge is a marker message with a KV-Operation header and no value.
	if bytes.Contains(r.Message.Header, []byte("KV-Operation: DEL")) || bytes.Contains(r.Message.Header, []byte("KV-Operation: PURGE")) {
		return nil, false, nil
	}
	return r.Message.Data, true, nil
}
