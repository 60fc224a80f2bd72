#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <time.h>
#include <sys/mman.h>
#include <sched.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static double chase(size_t *a,size_t n,long steps){size_t i=0;double t0=now();for(long s=0;s<steps;s++)i=a[i];double t=now()-t0;if(i==(size_t)-1)puts("");return t/steps*1e9;}
static size_t *make(size_t n){size_t *a=mmap(0,n*8,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0);
 size_t *p=malloc(n*8);for(size_t i=0;i<n;i++)p[i]=i;srand(1);for(size_t i=n-1;i>0;i--){size_t j=((size_t)rand()*RAND_MAX+rand())%i;size_t t=p[i];p[i]=p[j];p[j]=t;}
 for(size_t i=0;i<n;i++)a[p[i]]=p[(i+1)%n];free(p);return a;}
int main(int c,char**v){size_t mb=atoi(v[1]);int core=atoi(v[2]);cpu_set_t s;CPU_ZERO(&s);CPU_SET(core,&s);sched_setaffinity(0,sizeof s,&s);
 size_t n=mb*1024*1024/8;size_t *keep=make(n);
 for(int r=0;r<10;r++){size_t *a=make(n);double fresh=chase(a,n,2000000);munmap(a,n*8);double kept=chase(keep,n,2000000);printf("fresh %.1f kept %.1f ns\n",fresh,kept);fflush(stdout);}}
