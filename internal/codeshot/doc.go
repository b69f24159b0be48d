// Package codeshot holds the Code Shot few-shot language of Fixie agents: splitting few-shots the way Fixie did,
// validating them with every rule of Fixie 1.0 (reporting each problem by few-shot, line and rule), extracting the
// sample queries and the funcs and agents an example uses, classifying one line of model output for the executor's
// loop, and scanning text for embed references (#key).
//
// Everything here is a pure function of its arguments: no I/O, no clock, no logging. It must not import the event
// log, the read models, the HTTP client of the agent protocol or any face.
package codeshot
