"""The chief: one session over every lead, in every project the person registers.

    home.py      the chief's folder, a git repository of its own whose refs keep the chief's state
    projects.py  the projects: added, listed, removed, each change a commit on the chief's ref
    remote.py    a project on an SSH machine, read by running `git balanced ... --json` there
    allnow.py    one Now over every project, each row named by its project and its stable number
    notes.py     the chief's notes under a row of Now, kept in the project's own state refs
"""
