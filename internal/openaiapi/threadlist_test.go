package openaiapi_test

import (
	"context"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// TestThreadsAreListedForTheirAccountOnly: GET /v1/threads, Contrail's addition to the API (OpenAI has no list of
// threads), pages an account's threads newest first in OpenAI's list shape, and shows no other account's.
func TestThreadsAreListedForTheirAccountOnly(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	_, key := n.NewAccount(t, "ada")
	_, other := n.NewAccount(t, "eve")
	client := sdk(n, key)
	ctx := context.Background()
	var made []string
	for range 3 {
		th, err := client.Beta.Threads.New(ctx, openai.BetaThreadNewParams{})
		if err != nil {
			t.Fatal(apiErr(err))
		}
		made = append(made, th.ID)
	}
	otherClient := sdk(n, other)
	if _, err := otherClient.Beta.Threads.New(ctx, openai.BetaThreadNewParams{}); err != nil {
		t.Fatal(apiErr(err))
	}

	type page struct {
		Object  string `json:"object"`
		Data    []struct{ ID, Object string }
		FirstID *string `json:"first_id"`
		LastID  *string `json:"last_id"`
		HasMore bool    `json:"has_more"`
	}
	var p page
	n.Do(t, key, "GET", "/v1/threads?limit=2", nil).JSON(t, &p)
	if p.Object != "list" || len(p.Data) != 2 || !p.HasMore || p.Data[0].ID != made[2] || p.Data[1].ID != made[1] || p.Data[0].Object != "thread" {
		t.Fatalf("first page: %+v", p)
	}
	n.Do(t, key, "GET", "/v1/threads?limit=2&after="+*p.LastID, nil).JSON(t, &p)
	if len(p.Data) != 1 || p.HasMore || p.Data[0].ID != made[0] {
		t.Fatalf("second page: %+v", p)
	}
	n.Do(t, other, "GET", "/v1/threads", nil).JSON(t, &p)
	for _, th := range p.Data {
		for _, id := range made {
			if th.ID == id {
				t.Fatalf("eve's list holds ada's thread %s", id)
			}
		}
	}
	if len(p.Data) != 1 {
		t.Fatalf("eve's list: %+v", p)
	}
	if _, err := client.Beta.Threads.Delete(ctx, made[1]); err != nil {
		t.Fatal(apiErr(err))
	}
	n.Do(t, key, "GET", "/v1/threads?order=asc", nil).JSON(t, &p)
	if len(p.Data) != 2 || p.Data[0].ID != made[0] || p.Data[1].ID != made[2] {
		t.Fatalf("after a delete, ascending: %+v", p)
	}
	if r := n.Do(t, key, "GET", "/v1/threads?limit=0", nil); r.Status != 400 {
		t.Fatalf("limit=0: %d %s", r.Status, r.Body)
	}
}
