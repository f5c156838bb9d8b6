package mysqlstore

// CheckVariables runs the settings check of Open on vars, as SHOW VARIABLES returns them, for a
// table test of the settings a test cannot give a real server (a Galera node's).
func CheckVariables(vars map[string]string, unsafe bool) error {
	return (&Store{server: "tcp(db:3306)", unsafe: unsafe}).checkVariables(vars)
}
