"""The release builder: question units -> Otter Assign masters -> student notebooks, executed solution
notebooks and Gradescope autograder zips. It knows nothing of grading: hidden checks leave it as data."""
