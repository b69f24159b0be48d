package platform_test

import (
	"testing"
	"time"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// v1VectorStore is the owner's vector store, with a file processed and a file batch: another account reaches
// neither the store, nor its files, nor its search, nor its batch.
func v1VectorStore() fixture {
	var made struct {
		name, content string
		log           int
	}
	return fixture{
		Name:   "v1: vector store",
		Params: []string{"vector_store_id", "batch_id"},
		Make: func(t *testing.T, n *platformtest.Node, o owner) objects {
			made.name, made.content = "store-"+events.RandomToken(6), "passage-"+events.RandomToken(12)
			fileID := uploadFile(t, n, o.Key, "kb-"+events.RandomToken(6)+".txt", made.content)
			var vs struct {
				ID string `json:"id"`
			}
			r := n.Do(t, o.Key, "POST", "/v1/vector_stores", map[string]any{"name": made.name, "file_ids": []string{fileID}})
			r.JSON(t, &vs)
			if r.Status != 200 || vs.ID == "" {
				t.Fatalf("matrix fixture: create a vector store: %d %s", r.Status, r.Body)
			}
			var batch struct {
				ID string `json:"id"`
			}
			r = n.Do(t, o.Key, "POST", "/v1/vector_stores/"+vs.ID+"/file_batches", map[string]any{"file_ids": []string{fileID}})
			r.JSON(t, &batch)
			if r.Status != 200 || batch.ID == "" {
				t.Fatalf("matrix fixture: create a file batch: %d %s", r.Status, r.Body)
			}
			waitStoreProcessed(t, n, o.Key, vs.ID)
			made.log = logLength(t, n, events.Ref{Type: "vstore", ID: vs.ID})
			return objects{Params: map[string]string{"vector_store_id": vs.ID, "batch_id": batch.ID},
				Secrets: []string{made.name, made.content}}
		},
		Bodies: map[string]any{
			"POST /v1/vector_stores/{vector_store_id}/search":       map[string]any{"query": "passage"},
			"POST /v1/vector_stores/{vector_store_id}/files":        map[string]any{"file_id": "file-planted"},
			"POST /v1/vector_stores/{vector_store_id}/file_batches": map[string]any{"file_ids": []string{"file-planted"}},
			"POST /v1/vector_stores/{vector_store_id}/files/{file_id}": map[string]any{
				"attributes": map[string]any{"planted": true}},
			"POST /v1/vector_stores/{vector_store_id}": map[string]any{"name": "planted"},
		},
		Intact: func(t *testing.T, n *platformtest.Node, o owner, objs objects) {
			id := objs.Params["vector_store_id"]
			var vs struct {
				Name string `json:"name"`
			}
			r := n.Do(t, o.Key, "GET", "/v1/vector_stores/"+id, nil)
			r.JSON(t, &vs)
			if r.Status != 200 || vs.Name != made.name {
				t.Errorf("account A's vector store after account B's requests: %d %s", r.Status, r.Body)
			}
			checkLog(t, n, o, events.Ref{Type: "vstore", ID: id}, made.log)
		},
		Probes: []probe{
			{Method: "GET", Path: "/v1/vector_stores?after={vector_store_id}&order=asc"},
		},
	}
}

// waitStoreProcessed waits until no file of a store is in progress.
func waitStoreProcessed(t *testing.T, n *platformtest.Node, key, id string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var vs struct {
			Counts struct {
				InProgress int `json:"in_progress"`
			} `json:"file_counts"`
		}
		r := n.Do(t, key, "GET", "/v1/vector_stores/"+id, nil)
		r.JSON(t, &vs)
		if r.Status == 200 && vs.Counts.InProgress == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("vector store %s still processing after 30s: %d %s", id, r.Status, r.Body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
