// Package ui is how ckfs talks to people: it renders what the other
// packages return (a timeline, a rewind's plan and checks, a collection, a
// push) as text, colours diffs, and drives the terminal (the pager, the
// progress bar, the interactive picker). It decides nothing and writes no
// store: the CLI chooses what to show and where, and gives the answer here
// to be worded.
package ui
