package ui

import (
	"fmt"
	"io"
	"strings"

	"github.com/ckfs-dev/ckfs/config"
	"github.com/ckfs-dev/ckfs/doctor"
)

// Diagnoses prints the checks of ckfs doctor, each failure with its fix.
func Diagnoses(out io.Writer, ds []doctor.Diagnosis) {
	for _, d := range ds {
		fmt.Fprintf(out, "%-5s %s: %s\n", strings.ToUpper(d.Status), d.Check, d.Detail)
		if d.Fix != "" {
			fmt.Fprintf(out, "      fix: %s\n", d.Fix)
		}
	}
}

// Config prints the settings in effect and where each was set.
func Config(out io.Writer, c *config.Config, path, root string, asJSON bool) {
	if asJSON {
		type entry struct {
			Key    string `json:"key"`
			Value  string `json:"value"`
			Source string `json:"source"`
		}
		var es []entry
		for _, k := range config.Keys {
			es = append(es, entry{k, c.Value(k), c.Sources[k]})
		}
		JSON(out, struct {
			File       string  `json:"file"`
			Repository string  `json:"repository"`
			Settings   []entry `json:"settings"`
		}{path, root, es})
		return
	}
	fmt.Fprintf(out, "# configuration file: %s\n# repository: %s\n", path, root)
	for _, k := range config.Keys {
		fmt.Fprintf(out, "%-24s = %-22s # %s\n", k, c.Value(k), c.Sources[k])
	}
}
