package assistant

import (
	"testing"

	"github.com/contrailhq/contrail/events"
)

func TestAnAssistantIsItsOwnersUntilDeleted(t *testing.T) {
	name := "helper"
	var a State
	a.Apply(events.Envelope{AggregateID: "asst_1", Account: "acct_a", Event: events.AssistantCreated{AssistantSpec: events.AssistantSpec{Model: "m", Name: &name}}})
	if !a.Owned("acct_a") || a.Owned("acct_b") || *a.Spec.Name != "helper" {
		t.Fatalf("created: %+v", a)
	}
	a.Apply(events.Envelope{AggregateID: "asst_1", Account: "acct_a", Event: events.AssistantModified{AssistantSpec: events.AssistantSpec{Model: "m2"}}})
	if a.Spec.Model != "m2" || a.Spec.Name != nil {
		t.Fatalf("a modify replaces the settings whole: %+v", a.Spec)
	}
	a.Apply(events.Envelope{AggregateID: "asst_1", Account: "acct_a", Event: events.AssistantDeleted{}})
	if a.Owned("acct_a") {
		t.Fatal("a deleted assistant is still its owner's")
	}
}
