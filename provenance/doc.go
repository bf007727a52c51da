// Package provenance answers "who wrote this": the line-by-line origin of
// a file across the versions the timeline recorded of it (Blame), each
// line credited to the tool-call window, the user's own edit or the state
// from before ckfs that last wrote it. It reads records and stored
// content and nothing else: it never touches the workspace.
package provenance
