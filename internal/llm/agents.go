package llm

// AgentsHeading starts the part of a front agent's system prompt that lists the agents a user can ask, one a line
// ("- calc: Does arithmetic. Try: \"What is 12 times 7?\""), or "(none)". The front agent writes it and the
// offline model, which cannot read a prompt otherwise, answers "help" with it.
const AgentsHeading = "Agents the user can ask:"
