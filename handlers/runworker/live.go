package runworker

import (
	"encoding/json"
	"log/slog"

	"github.com/nats-io/nats.go"

	"github.com/contrailhq/contrail/domain/thread"
	"github.com/contrailhq/contrail/handlers/turn"
	"github.com/contrailhq/contrail/internal/livejoin"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/runlive"
)

// publisher turns a turn's streamed answer into live frames on the thread's live subject. Publishing is fire and
// forget: a frame nobody hears is lost, and the log carries the whole answer anyway.
type publisher struct {
	nc      *nats.Conn
	subject string
	run     *thread.Run
	turn    string
	after   uint64
	at      int64
	logger  *slog.Logger

	pieces       turn.Pieces      // where each frame's text goes in the answer's text or its call's arguments
	text         *livejoin.Joiner // the answer's text, joined when its pieces come close together
	announcedMsg bool
	announcedStp bool
}

func (p *publisher) delta(d llm.Delta) {
	switch {
	case d.Text != "":
		if !p.announcedMsg {
			p.announcedMsg = true
			p.publish(runlive.Frame{Kind: runlive.KindMessage, StepID: thread.TurnMessageStepID(p.turn),
				MessageID: thread.TurnMessageID(p.turn)})
			p.text = livejoin.New(func(text string) {
				p.publish(runlive.Frame{Kind: runlive.KindText, MessageID: thread.TurnMessageID(p.turn), Offset: p.pieces.AddText(text), Text: text})
			})
		}
		p.text.Write(d.Text)
	case d.ToolCall != nil:
		p.text.Flush() // frames go out in the order the model gave them
		step := thread.TurnToolStepID(p.turn)
		if !p.announcedStp {
			p.announcedStp = true
			p.publish(runlive.Frame{Kind: runlive.KindToolStep, StepID: step})
		}
		c := d.ToolCall
		offset, first := p.pieces.AddCall(*c)
		fr := runlive.Frame{Kind: runlive.KindTool, StepID: step, Index: c.Index, Offset: offset, Text: c.Arguments}
		if first {
			fr.CallID, fr.Name = callID(p.turn, c.Index, c.ID), c.Name
		}
		p.publish(fr)
	}
}

// flush sends the text that waits to be joined; the turn calls it once the model has answered, before it records
// the answer.
func (p *publisher) flush() { p.text.Flush() }

func (p *publisher) publish(fr runlive.Frame) {
	fr.RunID, fr.After, fr.At, fr.AssistantID = p.run.RunID, p.after, p.at, p.run.AssistantID
	b, err := json.Marshal(fr)
	if err != nil {
		return
	}
	if err := p.nc.Publish(p.subject, b); err != nil {
		p.logger.Debug("run worker: publish live frame", "err", err)
	}
}
