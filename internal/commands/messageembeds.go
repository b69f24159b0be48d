package commands

import (
	"context"
	"encoding/base64"
	"fmt"
	"mime"
	"net/url"
	"strings"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/agents"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/errs"
)

// EmbedSource is an embed a new message carries: an uploaded embed's ID, or a data: URI (stored as an embed), or
// an http(s) URI kept as it is (ContentType required).
type EmbedSource struct {
	EmbedID     string
	URI         string
	ContentType string
}

// ForMessage checks and stores what a message carries: uploaded embeds must be the caller's; data: URIs are
// stored as embeds; http(s) URIs are kept as they are.
func (c *Embeds) ForMessage(ctx context.Context, actor auth.Principal, in map[string]EmbedSource) (map[string]events.MessageEmbed, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := make(map[string]events.MessageEmbed, len(in))
	for key, src := range in {
		field := "embeds." + key
		if !agents.ValidEmbedKey(key) {
			return nil, errs.InvalidField("embeds", "embed key %q: use letters, digits and '_' (up to 64), so that the text can refer to it as #key", key)
		}
		switch {
		case src.EmbedID != "" && src.URI != "":
			return nil, errs.InvalidField(field, "embed %q: give an embedId or a uri, not both", key)
		case src.EmbedID != "":
			e, err := c.Get(ctx, actor, src.EmbedID)
			if errs.CodeOf(err) == errs.NotFound {
				return nil, errs.InvalidField(field, "embed %q: no uploaded embed %q (upload it with POST /api/embeds first)", key, src.EmbedID)
			}
			if err != nil {
				return nil, err
			}
			out[key] = events.MessageEmbed{EmbedID: e.ID, ContentType: e.ContentType, ContentHash: e.ContentHash}
		case strings.HasPrefix(src.URI, "data:"):
			ct, data, err := decodeDataURI(src.URI)
			if err != nil {
				return nil, errs.InvalidField(field, "embed %q: %v", key, err)
			}
			e, _, err := c.Upload(ctx, actor, ct, "", strings.NewReader(string(data)))
			if err != nil {
				return nil, err
			}
			out[key] = events.MessageEmbed{EmbedID: e.ID, ContentType: e.ContentType, ContentHash: e.ContentHash}
		case src.URI != "":
			if CheckURL(field, src.URI) != nil {
				return nil, errs.InvalidField(field, "embed %q: uri must be a data: URI or an absolute http(s) URL of at most %d characters", key, maxURLChars)
			}
			if _, _, err := mime.ParseMediaType(src.ContentType); err != nil || len(src.ContentType) > maxContentTypeBytes {
				return nil, errs.InvalidField(field, "embed %q: an http(s) uri needs its contentType", key)
			}
			out[key] = events.MessageEmbed{URI: src.URI, ContentType: src.ContentType}
		default:
			return nil, errs.InvalidField(field, "embed %q: give an embedId (from POST /api/embeds) or a data: uri", key)
		}
	}
	return out, nil
}

// decodeDataURI reads "data:[<type>][;base64],<data>".
func decodeDataURI(uri string) (string, []byte, error) {
	head, body, ok := strings.Cut(strings.TrimPrefix(uri, "data:"), ",")
	if !ok {
		return "", nil, fmt.Errorf("a data: URI needs a ',' before its data")
	}
	b64 := strings.HasSuffix(head, ";base64")
	ct := strings.TrimSuffix(head, ";base64")
	if ct == "" {
		ct = "text/plain;charset=US-ASCII"
	}
	if _, _, err := mime.ParseMediaType(ct); err != nil {
		return "", nil, fmt.Errorf("data: URI media type %q: %v", ct, err)
	}
	if len(body) > MaxEmbedSize*4/3+4 {
		return "", nil, errs.E(errs.TooLarge, "a data: URI holds at most %d bytes", MaxEmbedSize)
	}
	if b64 {
		data, err := base64.StdEncoding.DecodeString(body)
		if err != nil {
			return "", nil, fmt.Errorf("data: URI is not valid base64: %v", err)
		}
		return ct, data, nil
	}
	data, err := url.PathUnescape(body)
	if err != nil {
		return "", nil, fmt.Errorf("data: URI is not valid percent-encoding: %v", err)
	}
	return ct, []byte(data), nil
}
