## torchfix snippet template for PowerShell, read by `torchfix env --shell powershell`
## (src/shellenv/snippet.cpp; docs/env.md, docs/windows.md). Template syntax:
##   - A line that starts with "##" is a comment of the template; it is dropped.
##   - "@@ NAME" starts a section; its lines run to the next "@@" line.
##     header  : written once, first          footer : written once, last
##     set     : written for each variable that gets a value
##     prepend : written for each directory put in front of a ';' list (PATH);
##               it must leave an entry that is already first alone and move
##               one found further back to the front, so that it wins
##   - {{name}} is replaced by the variable's name, {{value}} by its value
##     already quoted for PowerShell (a single-quoted string, or quoted runs
##     joined by + [char]0xHH for control bytes; one line), {{reason}} by one
##     line saying why the variable is there (set/prepend sections only);
##     {{shell}}, {{version}} and {{purpose}} (build, runtime, all) anywhere.
##   - Anything else is copied as it is.
## Windows lists are ';'-separated and its paths compare without regard to
## case, as PowerShell's -ne does. $env: assignments last for the session;
## `torchfix env --install --rc $PROFILE` keeps them.
## Every variable line must follow a one-line "# {{reason}}" comment.
@@ header
# Environment for PyTorch on this machine, from torchfix {{version}} (--for {{purpose}}).
# Regenerate: torchfix env --shell {{shell}} --for {{purpose}}
@@ set
# {{reason}}
$env:{{name}} = {{value}}
@@ prepend
# {{reason}}
$__torchfix = {{value}}; $env:{{name}} = (@($__torchfix) + @(([string]$env:{{name}}).Split(';') | Where-Object { $_ -and $_ -ne $__torchfix })) -join ';'; Remove-Variable __torchfix
