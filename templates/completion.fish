# fish completion for torchfix: `torchfix completions fish` prints this file,
# and packages install it as share/fish/vendor_completions.d/torchfix.fish.
# The words come from the binary (`torchfix __complete WORD...`), which reads
# them from its command definitions: commands, options, --gpu names.
function __torchfix_complete
    set -l cur (commandline -ct | string unescape)
    test -n "$cur"; or set cur ''
    set -l words (commandline -opc) $cur
    set -l found (command $words[1] __complete $words[2..-1] 2>/dev/null)
    if test (count $found) -gt 0
        printf '%s\n' $found
    else
        __fish_complete_path (commandline -ct)
    end
end
complete -c torchfix -f -a '(__torchfix_complete)'
