// Package calc is a sample Code Shot agent that does arithmetic: its one func, calc, evaluates an expression with
// a small hand-written parser (no code is ever executed).
package calc

import (
	"context"
	"net/http"
	"strings"

	"github.com/contrailhq/contrail/internal/agentproto"
	"github.com/contrailhq/contrail/internal/agentproto/agentkit"
	"github.com/contrailhq/contrail/internal/codeshot"
)

// BasePrompt and FewShots teach the model to hand arithmetic to Func[calc].
const (
	BasePrompt = "I am a calculator. I turn a question about numbers into an arithmetic expression and let Func[calc] work it out."
	// One example per operation, in words and in symbols: the offline model follows the nearest example, putting
	// the question's numbers in its place, so "plus" needs an example of its own to become "+", and "2+2" one to
	// stay as it is.
	FewShots = `Q: What is 12 times 7?
Ask Func[calc]: 12 * 7
Func[calc] says: 84
A: 12 times 7 is 84.

Q: What is 5 plus 3?
Ask Func[calc]: 5 + 3
Func[calc] says: 8
A: 5 plus 3 is 8.

Q: What is 10 minus 4?
Ask Func[calc]: 10 - 4
Func[calc] says: 6
A: 10 minus 4 is 6.

Q: What is 9 divided by 3?
Ask Func[calc]: 9 / 3
Func[calc] says: 3
A: 9 divided by 3 is 3.

Q: What is 3 to the power of 4?
Ask Func[calc]: 3 ^ 4
Func[calc] says: 81
A: 3 to the power of 4 is 81.

Q: What is 2+2?
Ask Func[calc]: 2+2
Func[calc] says: 4
A: 2+2 is 4.

Q: What is 6*8?
Ask Func[calc]: 6*8
Func[calc] says: 48
A: 6*8 is 48.

Q: What is 9-5?
Ask Func[calc]: 9-5
Func[calc] says: 4
A: 9-5 is 4.

Q: What is 8/2?
Ask Func[calc]: 8/2
Func[calc] says: 4
A: 8/2 is 4.

Q: What is 2^10?
Ask Func[calc]: 2^10
Func[calc] says: 1024
A: 2^10 is 1024.

Q: What is the square root of 2 divided by 4?
Ask Func[calc]: sqrt(2) / 4
Func[calc] says: 0.353553390593
A: The square root of 2 divided by 4 is 0.353553390593.

Q: How much is 2 to the power of 10, minus 24?
Ask Func[calc]: 2 ^ 10 - 24
Func[calc] says: 1000
A: 2 to the power of 10, minus 24, is 1000.`
)

// Agent returns the calculator agent.
func Agent() agentkit.Agent {
	return agentkit.Agent{
		BasePrompt: BasePrompt,
		FewShots:   codeshot.Split(FewShots),
		Funcs:      map[string]agentkit.Func{"calc": calc},
	}
}

// Handler serves the agent.
func Handler(opts ...agentkit.Option) (http.Handler, error) { return agentkit.New(Agent(), opts...) }

func calc(_ context.Context, c agentkit.Call) (agentproto.Message, error) {
	// Models like to end an expression with "=" or "?"; neither changes what it means.
	expr := strings.TrimRight(strings.TrimSpace(c.Message.Text), "=? ")
	v, err := Eval(expr)
	if err != nil {
		return agentproto.Message{}, agentkit.BadInput("cannot calculate %q: %v", expr, err)
	}
	return agentproto.Message{Text: Format(v)}, nil
}
