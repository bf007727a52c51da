package agent

import "fmt"

// Setup is what is set up for an agent on this machine, for ckfs doctor.
type Setup struct {
	Agent     *Agent
	Binary    string // its executable, "" when it is not found
	Settings  string // its user settings file
	Installed bool   // ckfs's hooks are in it (ckfs hooks install)
	// Fix says what to do before ckfs agent NAME can capture its calls,
	// "" when nothing is needed.
	Fix string
}

// Setup looks at the agent's executable and its user settings, for the
// ckfs binary exe.
func (a *Agent) Setup(exe string) Setup {
	s := Setup{Agent: a}
	s.Binary, _ = a.Executable()
	if p, err := a.SettingsPath(); err == nil {
		s.Settings = p
		s.Installed = hasHooks(p, a.HookSettings(exe))
		if a.plugin {
			_, s.Installed, _ = pluginFile(p)
		}
	}
	if a.installFirst != nil && a.installFirst() && !s.Installed {
		s.Fix = "ckfs hooks install " + a.Name + " (it cannot take hooks for one run here)"
	}
	return s
}

// String is the setup in one line.
func (s Setup) String() string {
	bin := s.Binary
	if bin == "" {
		bin = fmt.Sprintf("not on PATH (npm install -g %s, or set %s)", s.Agent.Package, s.Agent.BinaryEnv)
	}
	hooks := "passed for each run by ckfs agent " + s.Agent.Name
	if s.Installed {
		hooks = "installed in " + s.Settings
	}
	return fmt.Sprintf("%s: %s; hooks %s", s.Agent.Title, bin, hooks)
}
