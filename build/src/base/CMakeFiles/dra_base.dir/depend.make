# Empty dependencies file for dra_base.
# This may be replaced when dependencies are built.
