"""File and text formats every stage uses: JSON Lines, Markdown (escaping, tables) and PNG figures."""
