DROP TABLE override_applications;
