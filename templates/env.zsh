## torchfix snippet template for zsh, read by `torchfix env --shell zsh`
## (src/shellenv/snippet.cpp; docs/env.md). Template syntax:
##   - A line that starts with "##" is a comment of the template; it is dropped.
##   - "@@ NAME" starts a section; its lines run to the next "@@" line.
##     header  : written once, first          footer : written once, last
##     set     : written for each variable that gets a value
##     prepend : written for each directory put in front of a ':' list (PATH);
##               it must leave an entry that is already first alone and move
##               one found further back to the front, so that it wins
##   - {{name}} is replaced by the variable's name, {{value}} by its value
##     already quoted for this shell (one word, one line), {{reason}} by one
##     line saying why the variable is there (set/prepend sections only);
##     {{shell}}, {{version}} and {{purpose}} (build, runtime, all) anywhere.
##   - Anything else is copied as it is, including "${" and "{{{": in
##     "${{{name}}-}" the placeholder is the innermost {{name}}.
## Every variable line must follow a one-line "# {{reason}}" comment.
@@ header
# Environment for PyTorch on this machine, from torchfix {{version}} (--for {{purpose}}).
# Regenerate: torchfix env --shell {{shell}} --for {{purpose}}
@@ set
# {{reason}}
export {{name}}={{value}}
@@ prepend
# {{reason}}
case "${{{name}}-}:" in {{value}}:*) ;; *) _torchfix_rest=; _torchfix_left=${{{name}}-}; while [ -n "$_torchfix_left" ]; do _torchfix_entry=${_torchfix_left%%:*}; case "$_torchfix_left" in *:*) _torchfix_left=${_torchfix_left#*:} ;; *) _torchfix_left= ;; esac; case "$_torchfix_entry" in {{value}}) ;; *) _torchfix_rest=$_torchfix_rest${_torchfix_rest:+:}$_torchfix_entry ;; esac; done; export {{name}}={{value}}"${_torchfix_rest:+:$_torchfix_rest}"; unset _torchfix_rest _torchfix_left _torchfix_entry ;; esac
