# Warnings for shardflow's own targets (never for dependencies), and the sanitizers of the dev preset.
function(shardflow_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
    -Wno-sign-conversion -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Woverloaded-virtual
    -Wimplicit-fallthrough)
  if(SHARDFLOW_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

if(SHARDFLOW_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
