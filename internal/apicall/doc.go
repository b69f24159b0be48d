// Package apicall runs Julep's api_call tools: the HTTP request a tool describes (method, URL, headers, a JSON
// body or query parameters), with the model's arguments, to the hosts the operator allows (serve's
// --api-call-hosts) and nowhere else: a tool's URL, and every redirect, must name an allowed host.
//
// It imports events and errs; nothing of the log, the faces or the handlers.
package apicall
