package impure

// A test file may import what it likes: the rule is the planner's own code.
import _ "net/http"
