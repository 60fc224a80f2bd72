#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <time.h>
#include <sched.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(int c,char**v){int core=atoi(v[1]);double ms=atof(v[2]);cpu_set_t s;CPU_ZERO(&s);CPU_SET(core,&s);sched_setaffinity(0,sizeof s,&s);
 uint64_t a=1,b=2,d=3,e=4,n=0;double t0=now(),t;
 do{for(int i=0;i<10000;i++){a=a*6364136223846793005ULL+1;b=b*2862933555777941757ULL+3;d^=d<<7;d^=d>>9;e+=a^b;}n++;t=now()-t0;}while(t<ms/1000);
 printf("%.1f\n",n*10000/t/1e6+(a+b+d+e==0));}
