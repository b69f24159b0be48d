// Package genrand is the sample Code Shot agent of Fixie's agent protocol page: its func genrand draws a random
// integer between two bounds given as "lo, hi".
package genrand

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/contrailhq/contrail/internal/agentproto"
	"github.com/contrailhq/contrail/internal/agentproto/agentkit"
	"github.com/contrailhq/contrail/internal/codeshot"
)

// BasePrompt and FewShots are those of the protocol page's example (and of the Fixie SDK's randint agent).
const (
	BasePrompt = "I am a simple agent that generates a random number between two given values."
	FewShots   = `Q: Generate a random number between 0 and 19.
Ask Func[genrand]: 0, 19
Func[genrand] says: 17
A: The random number is 17.

Q: Generate a random value from 5 to 10, inclusive.
Ask Func[genrand]: 5, 10
Func[genrand] says: 8
A: The random number is 8.`
)

// Option configures the agent.
type Option func(*config)

type config struct{ seed *[2]uint64 }

// WithSeed makes the draws reproducible, for tests that need to know the number.
func WithSeed(seed1, seed2 uint64) Option {
	return func(c *config) { c.seed = &[2]uint64{seed1, seed2} }
}

// Agent returns the genrand agent.
func Agent(opts ...Option) agentkit.Agent {
	var c config
	for _, o := range opts {
		o(&c)
	}
	draw := rand.Int64N // safe for concurrent use
	if c.seed != nil {
		// A seeded generator is not safe for concurrent use: guard it.
		var mu sync.Mutex
		r := rand.New(rand.NewPCG(c.seed[0], c.seed[1]))
		draw = func(n int64) int64 {
			mu.Lock()
			defer mu.Unlock()
			return r.Int64N(n)
		}
	}
	return agentkit.Agent{
		BasePrompt: BasePrompt,
		FewShots:   codeshot.Split(FewShots),
		Funcs: map[string]agentkit.Func{"genrand": func(_ context.Context, call agentkit.Call) (agentproto.Message, error) {
			lo, hi, err := ParseBounds(call.Message.Text)
			if err != nil {
				return agentproto.Message{}, err
			}
			return agentproto.Message{Text: strconv.FormatInt(lo+draw(hi-lo+1), 10)}, nil
		}},
	}
}

// Handler serves the agent.
func Handler(opts ...agentkit.Option) (http.Handler, error) { return agentkit.New(Agent(), opts...) }

// numberWords are the bounds people write in words ("between zero and nine"), which a model may pass on as they are.
var numberWords = map[string]int64{
	"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
	"ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
	"seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
	"sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "thousand": 1000,
}

// ParseBounds reads "lo, hi" (integers, or numbers in words: up to twenty, the tens, "hundred" and "thousand"; a
// comma, spaces or both between them; either order) and returns the bounds in order.
func ParseBounds(text string) (lo, hi int64, err error) {
	fields := strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
	if len(fields) != 2 {
		return 0, 0, agentkit.BadInput(`expected two integers as "lo, hi", got %q`, text)
	}
	var bounds [2]int64
	for i, f := range fields {
		if n, ok := numberWords[strings.ToLower(f)]; ok {
			bounds[i] = n
			continue
		}
		if bounds[i], err = strconv.ParseInt(f, 10, 64); err != nil {
			return 0, 0, agentkit.BadInput("%q is not an integer", f)
		}
	}
	lo, hi = min(bounds[0], bounds[1]), max(bounds[0], bounds[1])
	if hi-lo < 0 || hi-lo == 1<<63-1 { // the span, plus one, must fit in an int64
		return 0, 0, agentkit.BadInput("the range %d to %d is too wide", lo, hi)
	}
	return lo, hi, nil
}
