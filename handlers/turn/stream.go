package turn

import "github.com/contrailhq/contrail/internal/llm"

// Pieces keeps the pieces in which the model streamed a turn's answer: the byte lengths of its text's pieces and,
// by the call's index, of each tool call's arguments. Both loops publish the pieces live as they come and record
// the answer after; the lengths let a stream synthesised from the log later split the text alike, and the offsets
// place each live piece in what will be recorded.
type Pieces struct {
	text    []int
	textLen int
	calls   map[int]*callPieces
	order   []int
}

type callPieces struct {
	id   string
	args []int
	sent int
}

// AddText records a piece of the text and returns where it begins in the text (in bytes).
func (p *Pieces) AddText(piece string) (offset int) {
	offset = p.textLen
	if piece != "" {
		p.text = append(p.text, len(piece))
		p.textLen += len(piece)
	}
	return offset
}

// AddCall records a piece of a tool call: it returns where the piece's arguments begin in the call's (in bytes),
// and whether it is the first piece of that call (which carries its ID and name).
func (p *Pieces) AddCall(d llm.ToolCallDelta) (offset int, first bool) {
	if p.calls == nil {
		p.calls = map[int]*callPieces{}
	}
	c, seen := p.calls[d.Index]
	if !seen {
		c = &callPieces{}
		p.calls[d.Index] = c
		p.order = append(p.order, d.Index)
	}
	if d.ID != "" {
		c.id = d.ID
	}
	offset = c.sent
	if d.Arguments != "" {
		c.args = append(c.args, len(d.Arguments))
		c.sent += len(d.Arguments)
	}
	return offset, !seen
}

// Text is the lengths of the text's pieces.
func (p *Pieces) Text() []int { return p.text }

// Args is the lengths of the argument pieces of the call the model named id (nil: none streamed).
func (p *Pieces) Args(id string) []int {
	for _, i := range p.order {
		if c := p.calls[i]; c.id == id {
			return c.args
		}
	}
	return nil
}
