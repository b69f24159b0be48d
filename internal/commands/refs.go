package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/contrailhq/contrail/domain/file"
	"github.com/contrailhq/contrail/domain/vectorstore"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/ids"
)

// The references a request body makes to other objects (files, vector stores) are checked when it is made: another
// account's object is refused exactly as an ID that names nothing is, so that an assistant or a thread never lists
// what its account cannot see, and the answer does not tell an outsider that the object exists.

// maxResourceIDs bounds the IDs one tool_resources names (OpenAI: 20 files for code_interpreter, 1 vector store).
const maxResourceIDs = 100

// toolResources is what an assistant's or a thread's tool_resources names.
type toolResources struct {
	CodeInterpreter *struct {
		FileIDs []string `json:"file_ids"`
	} `json:"code_interpreter"`
	FileSearch *struct {
		VectorStoreIDs []string        `json:"vector_store_ids"`
		VectorStores   json.RawMessage `json:"vector_stores"`
	} `json:"file_search"`
}

// checkToolResources checks that the files and the vector stores tool_resources names are the actor's; field is
// where it sits in the request ("tool_resources", "thread.tool_resources").
func checkToolResources(ctx context.Context, store *eventstore.Store, actor auth.Principal, field string, raw json.RawMessage) error {
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		return nil
	}
	var tr toolResources
	if err := json.Unmarshal(raw, &tr); err != nil {
		return errs.InvalidField(field, "%s must be {code_interpreter: {file_ids: [...]}, file_search: {vector_store_ids: [...]}}", field)
	}
	if c := tr.CodeInterpreter; c != nil {
		at := field + ".code_interpreter.file_ids"
		if err := checkCount(at, len(c.FileIDs), maxResourceIDs); err != nil {
			return err
		}
		for i, id := range c.FileIDs {
			if err := ownedFile(ctx, store, actor, fmt.Sprintf("%s[%d]", at, i), id); err != nil {
				return err
			}
		}
	}
	if s := tr.FileSearch; s != nil {
		if v := bytes.TrimSpace(s.VectorStores); len(v) > 0 && string(v) != "null" && string(v) != "[]" {
			// OpenAI's helper that makes a store from file_ids: not made here, so refused rather than dropped.
			return errs.InvalidField(field+".file_search.vector_stores", "vector_stores is not supported: create the vector store (POST /v1/vector_stores) and name it in vector_store_ids")
		}
		at := field + ".file_search.vector_store_ids"
		if err := checkCount(at, len(s.VectorStoreIDs), maxResourceIDs); err != nil {
			return err
		}
		for i, id := range s.VectorStoreIDs {
			if err := ownedStore(ctx, store, actor, fmt.Sprintf("%s[%d]", at, i), id); err != nil {
				return err
			}
		}
	}
	return nil
}

// WithVectorStore is tool_resources with the vector store id added to file_search.vector_store_ids (once), the rest
// kept as it was.
func WithVectorStore(raw json.RawMessage, id string) (json.RawMessage, error) {
	tr := map[string]any{}
	if t := bytes.TrimSpace(raw); len(t) > 0 && string(t) != "null" {
		if err := json.Unmarshal(t, &tr); err != nil {
			return nil, errs.InvalidField("tool_resources", "tool_resources must be an object")
		}
	}
	fs, _ := tr["file_search"].(map[string]any)
	if fs == nil {
		fs = map[string]any{}
	}
	stores, _ := fs["vector_store_ids"].([]any)
	for _, s := range stores {
		if s == id {
			return raw, nil
		}
	}
	fs["vector_store_ids"] = append(stores, id)
	tr["file_search"] = fs
	return json.Marshal(tr)
}

// ownedFile refuses a file ID that names no file of the actor's, naming field.
func ownedFile(ctx context.Context, store *eventstore.Store, actor auth.Principal, field, id string) error {
	return owned[file.State](ctx, store, actor, field, ids.File, file.Aggregate, "file", id)
}

// ownedStore refuses a vector store ID that names no store of the actor's, naming field.
func ownedStore(ctx context.Context, store *eventstore.Store, actor auth.Principal, field, id string) error {
	return owned[vectorstore.State](ctx, store, actor, field, ids.VectorStore, vectorstore.Aggregate, "vector store", id)
}

// owned refuses an ID of kind that names no aggregate of the actor's, as a 404 naming field and the object (noun).
// A refusal is confirmed on the stream leader's history (foldConfirmed), so that a file made a moment ago on
// another node is not refused by a lagging replica.
func owned[S any, P interface {
	*S
	eventstore.State
	Owned(account string) bool
}](ctx context.Context, store *eventstore.Store, actor auth.Principal, field string, kind ids.Kind, aggregate, noun, id string) error {
	if err := ids.Check(field, kind, id); err != nil {
		return err
	}
	s, err := foldConfirmed[S, P](ctx, store, events.Ref{Type: aggregate, ID: id},
		func(s *S) bool { return P(s).Owned(actor.AccountID) })
	if err != nil {
		return fmt.Errorf("load %s %s: %w", noun, id, err)
	}
	if !P(&s).Owned(actor.AccountID) {
		e := errs.E(errs.NotFound, "No %s found with id '%s'.", noun, clipID(id))
		e.Field = field
		return e
	}
	return nil
}
