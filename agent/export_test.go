package agent

// Must returns the agent named name, for the external tests.
func Must(name string) *Agent {
	a, err := Lookup(name)
	if err != nil {
		panic(err)
	}
	return a
}
